import Testing
@testable import IPCWire

@Suite("308 call events")
struct CallMessageTests {
    @Test func callRoundTrips() throws {
        let msg = CallMessage(event: .call, curId: "u1", targetId: "dev1", sessionId: "s1",
                              timeout: 1_732_200_030_000, callType: .oneToMore,
                              extra: CallExtra(category: "sp_dpsxj"))
        let bytes = msg.envelope(t: 1_732_200_000).encoded()
        let env = try Envelope.decode(bytes)
        #expect(env.protocolNumber == .callSignalling)
        #expect(env.t == 1_732_200_000)
        #expect(try CallMessage.decode(envelopeData: env.data) == msg)
    }

    @Test func numericCallEventIsAccepted() throws {
        let json = #"{"protocol":308,"t":1,"data":{"type":"rtc","data":{"callEvent":3,"curId":"a","targetId":"b","sessionId":"s"}}}"#
        let env = try Envelope.decode(Array(json.utf8))
        #expect(try CallMessage.decode(envelopeData: env.data).event == .hangUp)
    }

    @Test func missingSessionIdIsNamed() throws {
        let json = #"{"protocol":308,"t":1,"data":{"type":"rtc","data":{"event":"ring","curId":"a","targetId":"b"}}}"#
        let env = try Envelope.decode(Array(json.utf8))
        #expect(throws: WireError.missingField("data.data.sessionId")) {
            try CallMessage.decode(envelopeData: env.data)
        }
    }
}

/// PROTOCOL.md 3.4: numbers at their extremes decode without trapping and are judged by the engine.
@Suite("308 numbers at their extremes")
struct CallMessageExtremeNumberTests {
    private func callJSON(_ fields: String, event: String = "call") -> [UInt8] {
        Array(#"{"protocol":308,"t":1732200000,"data":{"type":"rtc","data":{"event":"\#(event)","curId":"u1","targetId":"dev1","sessionId":"s1","extra":{"bizType":"screen_ipc"}\#(fields)}}}"#.utf8)
    }

    private func decodeCall(_ json: [UInt8]) throws -> CallMessage {
        guard case .call(let m) = try InboundMessage.decode(payload: json).message else {
            throw WireError.missingField("not a call")
        }
        return m
    }

    @Test("a timeout beyond Int64 saturates (far future, far past)", arguments: [
        (",\"timeout\":9223372036854775807", Int64.max),
        (",\"timeout\":9223372036854775808", Int64.max),
        (",\"timeout\":1e300", Int64.max),
        (",\"timeout\":-9223372036854775808", Int64.min),
        (",\"timeout\":-1e300", Int64.min),
        (",\"timeout\":0", Int64(0)),
        (",\"timeout\":-1", Int64(-1)),
    ])
    func timeoutSaturates(_ fields: String, _ expected: Int64) throws {
        #expect(try decodeCall(callJSON(fields)).timeout == expected)
    }

    @Test("a fractional timeout is the wrong type (dropped), not rounded")
    func fractionalTimeout() {
        #expect(throws: WireError.self) { try decodeCall(callJSON(",\"timeout\":1.5")) }
    }

    @Test("a call with callType outside 1-3 (or mistyped) is kept with its problem for the engine", arguments: [
        "0", "4", "-1", "9223372036854775807", "-9223372036854775808", "1e300", "\"1\"", "1.5", "true",
    ])
    func callTypeOutOfRangeOnCall(_ value: String) throws {
        let m = try decodeCall(callJSON(",\"timeout\":1732200030000,\"callType\":\(value)"))
        #expect(m.callType == nil)
        #expect(m.problem?.contains("callType") == true)
    }

    @Test("a valid callType leaves no problem")
    func validCallType() throws {
        let m = try decodeCall(callJSON(",\"timeout\":1732200030000,\"callType\":3"))
        #expect(m.callType == .oneToMoreSpecial && m.problem == nil)
    }

    @Test("on other events an out-of-range callType is still a decode error")
    func callTypeOnHangUp() {
        #expect(throws: WireError.self) { try decodeCall(callJSON(",\"callType\":9", event: "hang_up")) }
    }

    @Test("a channelType at the extremes is kept as a value the engine refuses", arguments: [
        "9223372036854775807", "-9223372036854775808", "1e300", "-1e300",
    ])
    func channelTypeExtremes(_ value: String) throws {
        let json = Array(#"{"protocol":308,"t":1,"data":{"type":"rtc","data":{"event":"call","curId":"u1","targetId":"dev1","sessionId":"s1","timeout":5,"extra":{"bizType":"screen_ipc","channelType":\#(value)}}}}"#.utf8)
        let m = try decodeCall(json)
        let channel = try #require(m.extra?.channelType)
        #expect(ChannelType(rawValue: channel) == nil)
    }

    @Test("an envelope t at the extremes decodes (the sender's clock is informational)", arguments: [
        ("9223372036854775807", Int64.max), ("1e300", Int64.max), ("-1e300", Int64.min), ("0", Int64(0)),
    ])
    func envelopeTime(_ value: String, _ expected: Int64) throws {
        let json = Array(#"{"protocol":309,"t":\#(value),"data":{"type":"ability_query","curId":"u","reqId":"r"}}"#.utf8)
        #expect(try Envelope.decode(json).t == expected)
    }

    @Test("callEvent and sdpMLineIndex at the extremes are refused with a named error, not a trap")
    func otherExtremes() {
        let callEvent = Array(#"{"protocol":308,"t":1,"data":{"type":"rtc","data":{"callEvent":-9223372036854775808,"curId":"u1","targetId":"d","sessionId":"s"}}}"#.utf8)
        #expect(throws: WireError.unknownEvent("-9223372036854775808")) { try InboundMessage.decode(payload: callEvent) }
        for index in ["-1", "9223372036854775807", "-9223372036854775808", "2147483648"] {
            let json = Array(#"{"protocol":302,"t":1,"data":{"header":{"type":"candidate","from":"u","to":"d","sessionid":"s"},"msg":{"mode":"webrtc","candidate":"candidate:1 1 udp 1 127.0.0.1 9 typ host","sdpMLineIndex":\#(index)}}}"#.utf8)
            #expect(throws: WireError.self) { try InboundMessage.decode(payload: json) }
        }
        for streamType in ["-1", "2", "9223372036854775807", "1e300"] {
            let json = Array(#"{"protocol":302,"t":1,"data":{"header":{"type":"offer","from":"u","to":"d","sessionid":"s"},"msg":{"mode":"webrtc","sdp":"v=0","auth":"x","stream_type":\#(streamType)}}}"#.utf8)
            #expect(throws: WireError.self) { try InboundMessage.decode(payload: json) }
        }
        let closeReason = Array(#"{"protocol":302,"t":1,"data":{"header":{"type":"disconnect","from":"u","to":"d","sessionid":"s"},"msg":{"mode":"webrtc","close_reason":-9223372036854775808}}}"#.utf8)
        #expect((try? InboundMessage.decode(payload: closeReason)) != nil)
    }
}
