import IPCWire

/// How an app reaches one device: its topics and payload protection (PROTOCOL.md 1, 2.1).
/// Without a profile, the protocol's default topics and plain payloads.
public struct DeviceAddress: Sendable, Equatable {
    public var devId: String
    public var inTopic: String
    public var outTopic: String
    public var metaTopic: String
    public var security: SecurityMode
    public var localKey: String
    /// For `auth` on P2P offers (PROTOCOL.md 4).
    public var p2pPassword: String

    public init(devId: String, inTopic: String? = nil, outTopic: String? = nil, metaTopic: String? = nil,
                security: SecurityMode = .plain, localKey: String = "0000000000000000", p2pPassword: String = "") {
        self.devId = devId
        self.inTopic = inTopic ?? Self.defaultTemplate(.in).replacingDevId(devId)
        self.outTopic = outTopic ?? Self.defaultTemplate(.out).replacingDevId(devId)
        self.metaTopic = metaTopic ?? Self.defaultTemplate(.meta).replacingDevId(devId)
        self.security = security
        self.localKey = localKey
        self.p2pPassword = p2pPassword
    }

    enum Direction { case `in`, out, meta }

    static func defaultTemplate(_ d: Direction) -> String {
        switch d {
        case .in: "smart/device/in/{devId}"
        case .out: "smart/device/out/{devId}"
        case .meta: "smart/device/meta/{devId}"
        }
    }

    /// The wildcard filter that matches every device's out topic under the default template.
    public static let everyDeviceOutFilter = "smart/device/out/+"

    /// The devId of a default-template out topic (`smart/device/out/{devId}`), or nil.
    public static func devId(fromDefaultOutTopic topic: String) -> String? {
        let prefix = "smart/device/out/"
        guard topic.hasPrefix(prefix) else { return nil }
        let id = String(topic.dropFirst(prefix.count))
        return id.isEmpty || id.contains("/") ? nil : id
    }
}

extension String {
    func replacingDevId(_ devId: String) -> String {
        var out = ""
        var rest = Substring(self)
        while let r = rest.range(of: "{devId}") {
            out += rest[..<r.lowerBound]
            out += devId
            rest = rest[r.upperBound...]
        }
        return out + rest
    }
}
