import Foundation
import Testing
@testable import IPCWire

@Suite("inbound decoding and bad input (PROTOCOL.md 3.4)")
struct InboundMessageTests {
    @Test func everyKindDecodesThroughOneSwitch() throws {
        let messages: [InboundMessage] = [
            .call(CallMessage(event: .call, curId: "u", targetId: "d", sessionId: "s", timeout: 1_732_200_030_000,
                              extra: CallExtra(category: "sp_dpsxj"), appDeviceId: "phone")),
            .call(CallMessage(event: .stop, curId: "d", targetId: "u", sessionId: "s", reason: StopReason.invalidParams.rawValue)),
            .signal(SignalMessage(header: SignalHeader(from: "u", to: "d", sessionId: "s"),
                                  body: .answer(SignalAnswer(sdp: "v=0")))),
            .abilityQuery(AbilityQuery(curId: "u", reqId: "r")),
            .abilityAnswer(CapabilityProbeTests.answer),
            .abilityAnswer(CapabilityProbeTests.answer.asMeta),
        ]
        for m in messages {
            let env = Envelope(protocolNumber: m.protocolNumber, t: 1, data: m.envelopeData)
            let (decodedEnvelope, decoded) = try InboundMessage.decode(payload: env.encoded())
            #expect(decoded == m)
            #expect(decodedEnvelope == env)
        }
    }

    @Test(arguments: CallEvent.allCases)
    func everyCallEventRoundTrips(event: CallEvent) throws {
        let m = CallMessage(event: event, curId: "u", targetId: "d", sessionId: "s",
                            timeout: event == .call ? 5 : nil, callType: .oneToOneSpecialCheck(event))
        let (_, decoded) = try InboundMessage.decode(payload: m.envelope(t: 1).encoded())
        #expect(decoded == .call(m))
    }

    static func decodeError(_ json: String) -> WireError? {
        do {
            _ = try InboundMessage.decode(payload: bytes(json))
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [
        ("{\"protocol\":308,", "malformed"),
        ("", "malformed"),
        ("[1,2]", "notObject"),
        ("{\"protocol\":308,\"t\":1,\"data\":{\"type\":\"rtc\",\"data\":{\"event\":\"call\"}}", "malformed"),
    ])
    func malformedJSONIsRefused(json: String, kind: String) {
        let error = Self.decodeError(json)
        switch (kind, error) {
        case ("malformed", .malformedJSON?): break
        case ("notObject", .wrongType(field: "", expected: "object")?): break
        default: Issue.record("\(json) gave \(String(describing: error))")
        }
    }

    static let call = #"{"protocol":308,"t":1,"data":{"type":"rtc","data":{"event":"call","curId":"u","targetId":"d","sessionId":"s","timeout":5,"extra":{"bizType":"screen_ipc","channelType":2}}}}"#

    @Test(arguments: [
        ("\"protocol\":308,", WireError.missingField("protocol")),
        ("\"t\":1,", WireError.missingField("t")),
        ("\"event\":\"call\",", WireError.missingField("data.data.event")),
        ("\"curId\":\"u\",", WireError.missingField("data.data.curId")),
        ("\"targetId\":\"d\",", WireError.missingField("data.data.targetId")),
        ("\"sessionId\":\"s\",", WireError.missingField("data.data.sessionId")),
        ("\"timeout\":5,", WireError.missingField("data.data.timeout")),
        ("\"type\":\"rtc\",", WireError.missingField("data.type")),
    ])
    func missingRequiredFieldsAreNamed(remove: String, error: WireError) {
        let json = Self.call.replacingOccurrences(of: remove, with: "")
        #expect(json != Self.call)
        #expect(Self.decodeError(json) == error)
    }

    @Test(arguments: [
        ("\"t\":1", "\"t\":\"1\"", WireError.wrongType(field: "t", expected: "integer")),
        ("\"protocol\":308", "\"protocol\":\"308\"", WireError.wrongType(field: "protocol", expected: "integer")),
        ("\"curId\":\"u\"", "\"curId\":7", WireError.wrongType(field: "data.data.curId", expected: "string")),
        ("\"timeout\":5", "\"timeout\":5.5", WireError.wrongType(field: "data.data.timeout", expected: "integer")),
        ("\"timeout\":5", "\"timeout\":true", WireError.wrongType(field: "data.data.timeout", expected: "integer")),
        ("\"data\":{\"type\"", "\"data\":[],\"x\":{\"type\"", WireError.wrongType(field: "data", expected: "object")),
        ("\"event\":\"call\"", "\"event\":\"ring_ring\"", WireError.unknownEvent("ring_ring")),
        ("\"event\":\"call\"", "\"callEvent\":99", WireError.unknownEvent("99")),
        ("\"protocol\":308", "\"protocol\":307", WireError.unknownProtocol(307)),
    ])
    func wrongTypesAndUnknownsAreRefused(old: String, new: String, error: WireError) {
        let json = Self.call.replacingOccurrences(of: old, with: new)
        #expect(json != Self.call)
        #expect(Self.decodeError(json) == error)
    }

    @Test func payloadOver64KiBIsRefusedUnread() {
        // Not even JSON: the size check comes first.
        var big = bytes(Self.call)
        big += [UInt8](repeating: 0xFF, count: maxPayloadBytes)
        #expect(throws: WireError.payloadTooLarge(size: big.count, limit: maxPayloadBytes)) {
            try InboundMessage.decode(payload: big)
        }
        // Exactly 64 KiB of valid JSON is accepted.
        let pad = String(repeating: " ", count: maxPayloadBytes - Self.call.utf8.count)
        #expect(throws: Never.self) { try InboundMessage.decode(payload: bytes(Self.call + pad)) }
    }

    @Test func unknownProbeTypeIsNamed() {
        #expect(Self.decodeError(#"{"protocol":309,"t":1,"data":{"type":"hello"}}"#)
                == .invalidValue(field: "data.type", value: "'hello'", expected: "ability_query, ability or meta"))
    }
}

private extension CallType {
    /// Varies the call type across events so optional fields are covered too.
    static func oneToOneSpecialCheck(_ e: CallEvent) -> CallType? {
        e.number % 3 == 0 ? nil : CallType(rawValue: e.number % 3)
    }
}

@Suite("hostile JSON")
struct HostileJSONTests {
    @Test func deepNestingWithinTheLimitIsRefusedNotACrash() {
        let depth = 30_000
        let json = #"{"protocol":308,"t":1,"data":"# + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}"
        #expect(throws: WireError.self) { try InboundMessage.decode(payload: bytes(json)) }
    }

    @Test func numbersAreNotBooleansAndBooleansAreNotNumbers() throws {
        #expect(try JSONValue.parse(bytes("[1,0,true]")) == .array([.int(1), .int(0), .bool(true)]))
        #expect(try JSONValue.parse(bytes("[1.5,\"1\"]")) == .array([.double(1.5), .string("1")]))
    }
}
