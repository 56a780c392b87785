import Testing
@testable import IPCWire

/// PROTOCOL.md 8.1, 8.2, 8.3, 8.6: the doorbell messages round-trip, and bad input is a `WireError`
/// naming the field (never a trap, never a default).
@Suite("doorbell wire: 43, 308 video_doorbell, 4, 5, 31, 312 (PROTOCOL.md 8)")
struct DoorbellWireTests {
    static func decode(_ json: String) throws(WireError) -> InboundMessage {
        try InboundMessage.decode(payload: bytes(json)).message
    }

    static func error(_ json: String) -> WireError? {
        do {
            _ = try decode(json)
            return nil
        } catch {
            return error
        }
    }

    static let header = SignalHeader(from: "u1", to: "dev1", sessionId: "617bdf7a1732200000", motoId: "m1", tid: "t")

    static let messages: [InboundMessage] = [
        .doorbellPress(DoorbellPressMessage(devId: "dev1", etype: "ac_doorbell", edata: "617bdf7a1732200000")),
        .videoDoorbell(VideoDoorbellMessage(devId: "dev1", uid: "u1", event: .accept, eData: "617bdf7a1732200000")),
        .videoDoorbell(VideoDoorbellMessage(devId: "dev1", event: .timeout, eData: "c")),
        .videoDoorbell(VideoDoorbellMessage(devId: "dev1", uid: "u2", event: .stop, eData: "c", reason: "answered_by_other")),
        .dpReport(DPReport(devId: "dev1", values: [136: .string("1732200000"), 149: .bool(true), 145: .int(80)], t: 1_732_200_000)),
        .dpSet(DPSet(devId: "dev1", uid: "u1", dps: [(key: "149", value: .bool(true)), (key: "abc", value: .array([]))])),
        .dpQuery(DPQuery(devId: "dev1", uid: "u1", dpIds: [145, 149])),
        .dpQuery(DPQuery(devId: "dev1", uid: "u1")),
        .streamControl(StreamControlMessage(type: .speaker, header: header, body: .command(cmdValue: 1))),
        .streamControl(StreamControlMessage(type: .resolution, header: header.reply(), body: .reply(resCode: -1))),
    ]

    @Test("every doorbell message round-trips through InboundMessage (one switch)", arguments: messages)
    func roundTrip(message: InboundMessage) throws {
        let env = Envelope(protocolNumber: message.protocolNumber, t: 1, data: message.envelopeData)
        let (decodedEnvelope, decoded) = try InboundMessage.decode(payload: env.encoded())
        #expect(decoded == message)
        #expect(decodedEnvelope == env)
    }

    @Test("protocol numbers of PROTOCOL.md 2 and 8: 4, 5, 31, 43, 312")
    func protocolNumbers() {
        #expect(ProtocolNumber(rawValue: 4) == .dpReport)
        #expect(ProtocolNumber(rawValue: 5) == .dpSet)
        #expect(ProtocolNumber(rawValue: 31) == .dpQuery)
        #expect(ProtocolNumber(rawValue: 43) == .doorbellPress)
        #expect(ProtocolNumber(rawValue: 312) == .streamControl)
        #expect(ProtocolNumber(rawValue: 46) == nil)
    }

    @Test("8.1: the documented 43 example decodes")
    func pressExample() throws {
        let m = try Self.decode(#"{"protocol":43,"t":1732200000,"data":{"devId":"dev1","etype":"ac_doorbell","edata":"617bdf7a1732200000"}}"#)
        #expect(m == .doorbellPress(DoorbellPressMessage(devId: "dev1", etype: "ac_doorbell", edata: "617bdf7a1732200000")))
    }

    @Test("8.2: 308 tells type rtc from video_doorbell; any other type names data.type")
    func typeDispatch() throws {
        let doorbell = try Self.decode(#"{"protocol":308,"t":1,"data":{"type":"video_doorbell","data":{"devId":"dev1","uid":"u1","event":"accept","eData":"c1"}}}"#)
        #expect(doorbell == .videoDoorbell(VideoDoorbellMessage(devId: "dev1", uid: "u1", event: .accept, eData: "c1")))
        let rtc = try Self.decode(#"{"protocol":308,"t":1,"data":{"type":"rtc","data":{"event":"stop","curId":"u","targetId":"d","sessionId":"s"}}}"#)
        guard case .call = rtc else { Issue.record("rtc not decoded as a call: \(rtc)"); return }
        guard case .invalidValue(let field, _, _)? = Self.error(#"{"protocol":308,"t":1,"data":{"type":"doorbell","data":{}}}"#) else {
            Issue.record("an unknown 308 type decoded"); return
        }
        #expect(field == "data.type")
        #expect(Self.error(#"{"protocol":308,"t":1,"data":{"data":{}}}"#) == .missingField("data.type"))
    }

    @Test("8.2: video_doorbell refuses a missing or mistyped field and an unknown event, naming the path",
          arguments: [
            (#"{"uid":"u1","event":"accept","eData":"c"}"#, WireError.missingField("data.data.devId")),
            (#"{"devId":"d","uid":"u1","eData":"c"}"#, .missingField("data.data.event")),
            (#"{"devId":"d","uid":"u1","event":"accept"}"#, .missingField("data.data.eData")),
            (#"{"devId":"d","uid":7,"event":"accept","eData":"c"}"#, .wrongType(field: "data.data.uid", expected: "string")),
            (#"{"devId":"d","uid":"u1","event":1,"eData":"c"}"#, .wrongType(field: "data.data.event", expected: "string")),
            (#"{"devId":"d","uid":"u1","event":"accept","eData":"c","reason":false}"#, .wrongType(field: "data.data.reason", expected: "string")),
          ])
    func videoDoorbellRefusals(body: String, expected: WireError) {
        #expect(Self.error(#"{"protocol":308,"t":1,"data":{"type":"video_doorbell","data":"# + body + "}}") == expected)
    }

    @Test("8.2: an unknown video_doorbell event is refused naming data.data.event")
    func unknownDoorbellEvent() {
        guard case .invalidValue(let field, let value, _)? = Self.error(
            #"{"protocol":308,"t":1,"data":{"type":"video_doorbell","data":{"devId":"d","uid":"u","event":"ring","eData":"c"}}}"#) else {
            Issue.record("unknown event decoded"); return
        }
        #expect(field == "data.data.event")
        #expect(value == "'ring'")
    }

    @Test("8.1: 43 refuses missing and mistyped fields", arguments: [
        (#"{"etype":"ac_doorbell","edata":"c"}"#, WireError.missingField("data.devId")),
        (#"{"devId":"d","edata":"c"}"#, .missingField("data.etype")),
        (#"{"devId":"d","etype":"ac_doorbell","edata":5}"#, .wrongType(field: "data.edata", expected: "string")),
    ])
    func pressRefusals(body: String, expected: WireError) {
        #expect(Self.error(#"{"protocol":43,"t":1,"data":"# + body + "}") == expected)
    }

    @Test("8.3: a report's dps are ordered by id; keys must be DP ids, values bool/int/string")
    func reportDecoding() throws {
        let m = try Self.decode(#"{"protocol":4,"t":1,"data":{"devId":"d","dps":{"149":true,"136":"1732200000","0145":80},"t":1732200000}}"#)
        guard case .dpReport(let r) = m else { Issue.record("not a report"); return }
        #expect(r.dps.map(\.id) == [136, 145, 149])
        #expect(r[145] == .int(80))
        #expect(r.t == 1_732_200_000)
        #expect(Self.error(#"{"protocol":4,"t":1,"data":{"devId":"d","dps":{"abc":true},"t":1}}"#)
                == .invalidValue(field: "data.dps.abc", value: "key 'abc'", expected: "a DP id, 1-255 in decimal"))
        #expect(Self.error(#"{"protocol":4,"t":1,"data":{"devId":"d","dps":{"256":true},"t":1}}"#)
                == .invalidValue(field: "data.dps.256", value: "key '256'", expected: "a DP id, 1-255 in decimal"))
        #expect(Self.error(#"{"protocol":4,"t":1,"data":{"devId":"d","dps":{"149":[1]},"t":1}}"#)
                == .wrongType(field: "data.dps.149", expected: "a bool, an integer or a string"))
        #expect(Self.error(#"{"protocol":4,"t":1,"data":{"devId":"d","dps":{"149":1.5},"t":1}}"#)
                == .wrongType(field: "data.dps.149", expected: "a bool, an integer or a string"))
        #expect(Self.error(#"{"protocol":4,"t":1,"data":{"devId":"d","dps":{}}}"#) == .missingField("data.t"))
        #expect(Self.error(#"{"protocol":4,"t":1,"data":{"devId":"d","dps":[],"t":1}}"#) == .wrongType(field: "data.dps", expected: "object"))
        // A clock beyond Int64 saturates instead of trapping.
        guard case .dpReport(let far) = try Self.decode(#"{"protocol":4,"t":1,"data":{"devId":"d","dps":{},"t":1e30}}"#) else { return }
        #expect(far.t == .max)
    }

    @Test("8.3: a set keeps every member raw, a non-numeric key included, so the DP store can count it")
    func setKeepsRawMembers() throws {
        let m = try Self.decode(#"{"protocol":5,"t":1,"data":{"devId":"d","uid":"u1","dps":{"abc":1,"149":true,"9999999999999999999999":"x","7":{"a":1},"150":false}}}"#)
        guard case .dpSet(let s) = m else { Issue.record("not a set"); return }
        #expect(s.dps.map(\.key) == ["7", "149", "150", "9999999999999999999999", "abc"])
        #expect(s.dps.map { DPKey.id($0.key) } == [7, 149, 150, nil, nil])
        #expect(s.dps[0].value == .object(["a": .int(1)]))
        #expect(Self.error(#"{"protocol":5,"t":1,"data":{"devId":"d","dps":{}}}"#) == .missingField("data.uid"))
        #expect(Self.error(#"{"protocol":5,"t":1,"data":{"devId":"d","uid":"u"}}"#) == .missingField("data.dps"))
        #expect(Self.error(#"{"protocol":5,"t":1,"data":{"devId":"d","uid":"u","dps":"149"}}"#)
                == .wrongType(field: "data.dps", expected: "object"))
    }

    @Test("8.3: DP keys are decimal ids 1-255; anything else is no id (no trap on huge keys)")
    func dpKeys() {
        #expect(DPKey.id("149") == 149)
        #expect(DPKey.id("001") == 1)
        for bad in ["", "0", "256", "-1", "+5", " 5", "5 ", "1e2", "abc", "١٢", String(repeating: "9", count: 400)] {
            #expect(DPKey.id(bad) == nil, "\(bad)")
        }
    }

    @Test("8.3: a query's dpIds are optional, integers in range, named by index when wrong")
    func queryDecoding() throws {
        #expect(try Self.decode(#"{"protocol":31,"t":1,"data":{"devId":"d","uid":"u","dpIds":[]}}"#)
                == .dpQuery(DPQuery(devId: "d", uid: "u", dpIds: [])))
        #expect(DPQuery(devId: "d", uid: "u", dpIds: []).asksForAll)
        #expect(DPQuery(devId: "d", uid: "u").asksForAll)
        #expect(!DPQuery(devId: "d", uid: "u", dpIds: [149]).asksForAll)
        #expect(Self.error(#"{"protocol":31,"t":1,"data":{"devId":"d","uid":"u","dpIds":[145,"149"]}}"#)
                == .wrongType(field: "data.dpIds[1]", expected: "integer"))
        #expect(Self.error(#"{"protocol":31,"t":1,"data":{"devId":"d","uid":"u","dpIds":[145,0]}}"#)
                == .invalidValue(field: "data.dpIds[1]", value: "0", expected: "a DP id, 1-255"))
        #expect(Self.error(#"{"protocol":31,"t":1,"data":{"devId":"d","uid":"u","dpIds":[1e300]}}"#)
                == .wrongType(field: "data.dpIds[0]", expected: "integer"))
        #expect(Self.error(#"{"protocol":31,"t":1,"data":{"devId":"d","uid":"u","dpIds":[9223372036854775807]}}"#)
                == .invalidValue(field: "data.dpIds[0]", value: "9223372036854775807", expected: "a DP id, 1-255"))
        #expect(Self.error(#"{"protocol":31,"t":1,"data":{"uid":"u"}}"#) == .missingField("data.devId"))
    }

    @Test("8.6: the documented 312 example decodes; its reply swaps from/to and carries resCode")
    func streamControlExample() throws {
        let m = try Self.decode(#"{"protocol":312,"t":1732200000,"data":{"header":{"type":"speaker","from":"u1","to":"dev1","sessionid":"c1","moto_id":"","tid":""},"msg":{"mode":"webrtc","cmdValue":1}}}"#)
        guard case .streamControl(let s) = m else { Issue.record("not a 312"); return }
        #expect(s.type == .speaker && s.cmdValue == 1 && s.resCode == nil && s.header.sessionId == "c1")
        let reply = s.reply(resCode: StreamControlMessage.done)
        #expect(reply.header.from == "dev1" && reply.header.to == "u1" && reply.resCode == 0)
        let resolution = StreamControlMessage(type: .resolution, header: s.header, body: .command(cmdValue: 1))
        #expect(resolution.streamType == .sub)
        #expect(StreamControlMessage(type: .resolution, header: s.header, body: .command(cmdValue: 7)).streamType == nil)
        #expect(s.streamType == nil)
    }

    @Test("8.6: 312 refusals name the field", arguments: [
        (#"{"header":{"type":"zoom","from":"u","to":"d","sessionid":"s"},"msg":{"mode":"webrtc","cmdValue":1}}"#,
         WireError.invalidValue(field: "data.header.type", value: "'zoom'", expected: "speaker or resolution")),
        (#"{"header":{"type":"speaker","to":"d","sessionid":"s"},"msg":{"mode":"webrtc","cmdValue":1}}"#,
         .missingField("data.header.from")),
        (#"{"header":{"type":"speaker","from":"u","to":"d"},"msg":{"mode":"webrtc","cmdValue":1}}"#,
         .missingField("data.header.sessionid")),
        (#"{"header":{"type":"speaker","from":"u","to":"d","sessionid":"s"},"msg":{"mode":"webrtc"}}"#,
         .missingField("data.msg.cmdValue")),
        (#"{"header":{"type":"speaker","from":"u","to":"d","sessionid":"s"},"msg":{"mode":"webrtc","cmdValue":0.5}}"#,
         .wrongType(field: "data.msg.cmdValue", expected: "integer")),
        (#"{"header":{"type":"speaker","from":"u","to":"d","sessionid":"s"},"msg":{"cmdValue":1}}"#,
         .missingField("data.msg.mode")),
        (#"{"header":{"type":"speaker","from":"u","to":"d","sessionid":"s"}}"#, .missingField("data.msg")),
    ])
    func streamControlRefusals(body: String, expected: WireError) {
        #expect(Self.error(#"{"protocol":312,"t":1,"data":"# + body + "}") == expected)
    }

    @Test("8.1: a call id is 8 lowercase hex digits and the unix seconds")
    func callId() {
        var rng = DoorbellTestRNG(seed: 42)
        let id = makeDoorbellCallId(unixSeconds: 1_732_200_000, using: &rng)
        #expect(id.count == 18)
        #expect(id.hasSuffix("1732200000"))
        #expect(id.prefix(8).allSatisfy { "0123456789abcdef".contains($0) })
        var again = DoorbellTestRNG(seed: 42)
        #expect(makeDoorbellCallId(unixSeconds: 1_732_200_000, using: &again) == id)
        var other = DoorbellTestRNG(seed: 43)
        #expect(makeDoorbellCallId(unixSeconds: 1_732_200_000, using: &other) != id)
        #expect(makeDoorbellCallId(unixSeconds: -5, using: &rng).hasSuffix("0"))
    }
}

/// A seeded generator for repeatable ids.
private struct DoorbellTestRNG: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
