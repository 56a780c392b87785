/// `header.type` of a protocol 312 message (PROTOCOL.md 8.6).
public enum StreamControlType: String, Sendable, CaseIterable, Hashable {
    /// `cmdValue` 1: play the app's audio on the device's speaker (two-way talk); 0: stop.
    case speaker
    /// `cmdValue` 0 main stream, 1 sub stream (as §4's `resolution`).
    case resolution
}

/// The `msg` of a 312 message: the app's command, or the device's reply to it.
public enum StreamControlBody: Sendable, Equatable, Hashable {
    /// App -> device: `{"mode":"webrtc","cmdValue":<int>}`. The value as it came (any integer);
    /// the device refuses one it has no meaning for.
    case command(cmdValue: Int64)
    /// Device -> app: `{"mode":"webrtc","resCode":<int>}`, 0 done, -1 refused **[ours]**.
    case reply(resCode: Int64)
}

/// One 312 message (PROTOCOL.md 8.6): `{"header":{"type":"speaker",...},"msg":{...}}`. The header
/// is §4's (`from`, `to`, `sessionid`, `moto_id`, `tid`, `sub_dev_id`) with a 312 `type`.
public struct StreamControlMessage: Sendable, Equatable, Hashable {
    public var type: StreamControlType
    public var header: SignalHeader
    public var body: StreamControlBody
    public var mode: String

    /// `resCode` of a reply that was carried out.
    public static let done: Int64 = 0
    /// `resCode` of a refused command (no such link, another user, a stream it lacks) **[ours]**.
    public static let refused: Int64 = -1

    public init(type: StreamControlType, header: SignalHeader, body: StreamControlBody, mode: String = webRTCMode) {
        self.type = type
        self.header = header
        self.body = body
        self.mode = mode
    }

    /// The command's value, or nil for a reply.
    public var cmdValue: Int64? {
        guard case .command(let v) = body else { return nil }
        return v
    }

    /// The reply's code, or nil for a command.
    public var resCode: Int64? {
        guard case .reply(let c) = body else { return nil }
        return c
    }

    /// `resolution`: the stream a command asks for, or nil (not 0 or 1, or not a resolution command).
    public var streamType: StreamType? {
        guard type == .resolution, let v = cmdValue, v >= 0, v <= 1 else { return nil }
        return StreamType(rawValue: Int(v))
    }

    /// PROTOCOL.md 8.6: the device answers every 312 to its sender with the same header, `from`
    /// and `to` swapped, and `resCode`.
    public func reply(resCode: Int64) -> StreamControlMessage {
        StreamControlMessage(type: type, header: header.reply(), body: .reply(resCode: resCode), mode: mode)
    }

    /// Decodes the `data` of a 312 envelope. Strict: `header.type` (speaker or resolution),
    /// `header.from`, `header.to`, `header.sessionid`, `msg.mode` are required strings, and `msg`
    /// has an integer `cmdValue` (a command) or `resCode` (a reply); with both it is a command.
    public static func decode(envelopeData: JSONValue) throws(WireError) -> StreamControlMessage {
        let data = try JSONObjectReader(envelopeData, path: "data")
        let h = try data.object("header")
        let typeName = try h.string("type")
        guard let type = StreamControlType(rawValue: typeName) else {
            throw .invalidValue(field: h.fieldPath("type"), value: "'\(typeName)'", expected: "speaker or resolution")
        }
        let header = SignalHeader(
            from: try h.string("from"), to: try h.string("to"), sessionId: try h.string("sessionid"),
            subDevId: try h.optionalString("sub_dev_id") ?? "", motoId: try h.optionalString("moto_id") ?? "",
            tid: try h.optionalString("tid") ?? "")
        let msg = try data.object("msg")
        let body: StreamControlBody
        if msg.has("cmdValue") || !msg.has("resCode") {
            body = .command(cmdValue: try msg.int("cmdValue"))
        } else {
            body = .reply(resCode: try msg.int("resCode"))
        }
        return StreamControlMessage(type: type, header: header, body: body, mode: try msg.string("mode"))
    }

    /// The `data` of a 312 envelope.
    public var envelopeData: JSONValue {
        let headerJSON: JSONValue = .object([
            "type": .string(type.rawValue), "from": .string(header.from), "to": .string(header.to),
            "sessionid": .string(header.sessionId), "sub_dev_id": .string(header.subDevId),
            "moto_id": .string(header.motoId), "tid": .string(header.tid),
        ])
        let msgJSON: JSONValue = switch body {
        case .command(let v): .object(["mode": .string(mode), "cmdValue": .int(v)])
        case .reply(let c): .object(["mode": .string(mode), "resCode": .int(c)])
        }
        return .object(["header": headerJSON, "msg": msgJSON])
    }

    /// A 312 envelope sent at `t` (unix seconds).
    public func envelope(t: Int64, pv: String? = "2.2") -> Envelope {
        Envelope(protocolNumber: .streamControl, pv: pv, t: t, data: envelopeData)
    }
}
