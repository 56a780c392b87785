/// One video stream the device offers (`video.streams[]`).
public struct StreamAbility: Sendable, Equatable, Hashable {
    public var streamType: StreamType
    public var width: Int
    public var height: Int
    public var fps: Int

    public init(streamType: StreamType, width: Int, height: Int, fps: Int) {
        self.streamType = streamType
        self.width = width
        self.height = height
        self.fps = fps
    }
}

/// The device's answer to a probe, or its retained meta (protocol 309 **[ours]**, PROTOCOL.md 5).
public struct AbilityAnswer: Sendable, Equatable, Hashable {
    /// An answer to one query, or the meta published on connect.
    public enum Kind: Sendable, Equatable, Hashable {
        /// `type` "ability": for `targetId` (the query's `curId`), echoing its `reqId`.
        case answer(targetId: String, reqId: String)
        /// `type` "meta": no `targetId`/`reqId`.
        case meta
    }

    public var kind: Kind
    public var devId: String
    public var rtcCapability: RTCCapability
    public var bizType: String
    public var category: String
    public var channelTypes: [ChannelType]
    public var callTypes: [CallType]
    /// The profile lets an app open a link without a call.
    public var liveView: Bool
    public var videoCodecs: [String]
    public var streams: [StreamAbility]
    public var audioCodecs: [String]
    /// PROTOCOL.md 8.7: the device's skill, sent as a JSON string (`"skill":"{...}"`); nil: left out.
    public var skill: DeviceSkill? {
        didSet { skillText = skill?.jsonString }
    }
    /// `skill` as the JSON string the envelope carries, made once when the skill is set (a fleet's
    /// devices copy one template's answer: the reconnect storm encoded the same skill 100,000 times).
    public private(set) var skillText: String?
    /// PROTOCOL.md 8.4: a low-power device's meta says whether it is awake; nil (left out) for a
    /// device that never sleeps.
    public var awake: Bool?

    public init(kind: Kind, devId: String, rtcCapability: RTCCapability, bizType: String = screenIPCBizType,
                category: String, channelTypes: [ChannelType], callTypes: [CallType], liveView: Bool,
                videoCodecs: [String], streams: [StreamAbility], audioCodecs: [String],
                skill: DeviceSkill? = nil, awake: Bool? = nil) {
        self.kind = kind
        self.devId = devId
        self.rtcCapability = rtcCapability
        self.bizType = bizType
        self.category = category
        self.channelTypes = channelTypes
        self.callTypes = callTypes
        self.liveView = liveView
        self.videoCodecs = videoCodecs
        self.streams = streams
        self.audioCodecs = audioCodecs
        self.skill = skill
        self.skillText = skill?.jsonString
        self.awake = awake
    }

    /// `support`: computed from `rtcCapability` (bits 2 and 4 both set), never stored.
    public var support: Bool { rtcCapability.supportsTwoWayVideoCall }

    /// The same capabilities addressed as the answer to `query`.
    public func answering(_ query: AbilityQuery) -> AbilityAnswer {
        var copy = self
        copy.kind = .answer(targetId: query.curId, reqId: query.reqId)
        return copy
    }

    /// The same capabilities as the retained meta message.
    public var asMeta: AbilityAnswer {
        var copy = self
        copy.kind = .meta
        return copy
    }

    /// Decodes an `ability` or `meta` body. Strict: every field is required with its type,
    /// `channelTypes`/`callTypes`/`stream_type` must be known values, and `support` must agree
    /// with `rtcCapability`. `skill` (a string holding skill JSON) and `awake` (a bool) are optional
    /// (PROTOCOL.md 8.7, 8.4), checked when present.
    public static func decode(envelopeData: JSONValue) throws(WireError) -> AbilityAnswer {
        let r = try JSONObjectReader(envelopeData, path: "data")
        let kind: Kind
        switch try ProbeBodyType.decode(r) {
        case .ability: kind = .answer(targetId: try r.string("targetId"), reqId: try r.string("reqId"))
        case .meta: kind = .meta
        case .abilityQuery:
            throw .invalidValue(field: "data.type", value: "'ability_query'", expected: "'ability' or 'meta'")
        }
        let capRaw = try r.int("rtcCapability")
        guard capRaw >= 0, capRaw <= Int64(Int32.max) else {
            throw .invalidValue(field: r.fieldPath("rtcCapability"), value: String(capRaw), expected: "a non-negative bit mask")
        }
        let capability = RTCCapability(rawValue: Int(capRaw))
        let support = try r.bool("support")
        guard support == capability.supportsTwoWayVideoCall else {
            throw .invalidValue(field: r.fieldPath("support"), value: String(support),
                                expected: "\(capability.supportsTwoWayVideoCall) for rtcCapability \(capRaw)")
        }
        let video = try r.object("video")
        var streams: [StreamAbility] = []
        for s in try video.objectArray("streams") {
            streams.append(StreamAbility(streamType: try StreamType(reading: s, key: "stream_type"),
                                         width: try positive(s, "width"), height: try positive(s, "height"),
                                         fps: try positive(s, "fps")))
        }
        return AbilityAnswer(
            kind: kind, devId: try r.string("devId"), rtcCapability: capability, bizType: try r.string("bizType"),
            category: try r.string("category"),
            channelTypes: try enumArray(r, "channelTypes", ChannelType.init(rawValue:), expected: "0, 1 or 2"),
            callTypes: try enumArray(r, "callTypes", CallType.init(rawValue:), expected: "1, 2 or 3"),
            liveView: try r.bool("liveView"), videoCodecs: try video.stringArray("codecs"), streams: streams,
            audioCodecs: try r.object("audio").stringArray("codecs"),
            skill: try r.optionalString("skill").map { text throws(WireError) in
                try DeviceSkill.decode(text, field: r.fieldPath("skill"))
            },
            awake: try r.optionalBool("awake"))
    }

    private static func positive(_ r: JSONObjectReader, _ key: String) throws(WireError) -> Int {
        let n = try r.int(key)
        guard n > 0, n <= Int64(Int32.max) else {
            throw .invalidValue(field: r.fieldPath(key), value: String(n), expected: "a positive integer")
        }
        return Int(n)
    }

    private static func enumArray<T>(_ r: JSONObjectReader, _ key: String, _ make: (Int) -> T?,
                                     expected: String) throws(WireError) -> [T] {
        var out: [T] = []
        for (i, n) in try r.intArray(key).enumerated() {
            guard let value = make(Int(clamping: n)) else {
                throw .invalidValue(field: r.fieldPath(key) + "[\(i)]", value: String(n), expected: expected)
            }
            out.append(value)
        }
        return out
    }

    public var envelopeData: JSONValue {
        var o: [String: JSONValue] = [
            "devId": .string(devId), "support": .bool(support), "rtcCapability": .int(Int64(rtcCapability.rawValue)),
            "bizType": .string(bizType), "category": .string(category),
            "channelTypes": .array(channelTypes.map { .int(Int64($0.rawValue)) }),
            "callTypes": .array(callTypes.map { .int(Int64($0.rawValue)) }),
            "liveView": .bool(liveView),
            "video": .object([
                "codecs": .array(videoCodecs.map { .string($0) }),
                "streams": .array(streams.map {
                    .object(["stream_type": .int(Int64($0.streamType.rawValue)), "width": .int(Int64($0.width)),
                             "height": .int(Int64($0.height)), "fps": .int(Int64($0.fps))])
                }),
            ]),
            "audio": .object(["codecs": .array(audioCodecs.map { .string($0) })]),
        ]
        if let skillText { o["skill"] = .string(skillText) }
        if let awake { o["awake"] = .bool(awake) }
        switch kind {
        case .answer(let targetId, let reqId):
            o["type"] = .string(ProbeBodyType.ability.rawValue)
            o["targetId"] = .string(targetId)
            o["reqId"] = .string(reqId)
        case .meta:
            o["type"] = .string(ProbeBodyType.meta.rawValue)
        }
        return .object(o)
    }

    /// A 309 envelope sent at `t` (unix seconds). The meta message is always plain (capabilities
    /// are public): seal it with a plain `PayloadSealer`, whatever the profile's mode.
    public func envelope(t: Int64, pv: String? = nil) -> Envelope {
        Envelope(protocolNumber: .capabilityProbe, pv: pv, t: t, data: envelopeData)
    }
}
