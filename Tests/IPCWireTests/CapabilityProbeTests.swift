import Foundation
import Testing
@testable import IPCWire

@Suite("309 capability probe")
struct CapabilityProbeTests {
    static let answer = AbilityAnswer(
        kind: .answer(targetId: "u1", reqId: "r1"), devId: "dev1", rtcCapability: [.audio, .video, .twoWay],
        category: "sp_dpsxj", channelTypes: [.audio, .video, .audioVideo], callTypes: [.oneToOne, .oneToMore, .oneToMoreSpecial],
        liveView: true, videoCodecs: ["H264"],
        streams: [StreamAbility(streamType: .main, width: 1280, height: 720, fps: 30),
                  StreamAbility(streamType: .sub, width: 640, height: 360, fps: 15)],
        audioCodecs: ["PCMA", "OPUS"])

    static let example = #"""
    {"protocol":309,"t":1732200000,"data":{"type":"ability","targetId":"u1","reqId":"r1",
      "devId":"dev1","support":true,"rtcCapability":7,"bizType":"screen_ipc","category":"sp_dpsxj",
      "channelTypes":[0,1,2],"callTypes":[1,2,3],"liveView":true,
      "video":{"codecs":["H264"],"streams":[{"stream_type":0,"width":1280,"height":720,"fps":30},
                                              {"stream_type":1,"width":640,"height":360,"fps":15}]},
      "audio":{"codecs":["PCMA","OPUS"]}}}
    """#

    @Test func queryRoundTrips() throws {
        let q = AbilityQuery(curId: "u1", reqId: "r1")
        let env = try Envelope.decode(q.envelope(t: 5).encoded())
        #expect(env.protocolNumber == .capabilityProbe)
        #expect(try AbilityQuery.decode(envelopeData: env.data) == q)
        #expect(env.data == .object(["type": .string("ability_query"), "curId": .string("u1"), "reqId": .string("r1")]))
    }

    @Test func answerAndMetaRoundTrip() throws {
        for a in [Self.answer, Self.answer.asMeta] {
            let env = try Envelope.decode(a.envelope(t: 5).encoded())
            #expect(try AbilityAnswer.decode(envelopeData: env.data) == a)
        }
        guard case .object(let meta) = Self.answer.asMeta.envelopeData else { Issue.record("not an object"); return }
        #expect(meta["type"] == .string("meta"))
        #expect(meta["targetId"] == nil && meta["reqId"] == nil)
    }

    @Test func decodesTheProtocolExampleExactly() throws {
        let data = try dataOf(Self.example)
        #expect(try AbilityAnswer.decode(envelopeData: data) == Self.answer)
        #expect(Self.answer.envelopeData == data)
    }

    @Test func answeringAQueryAddressesIt() {
        let a = Self.answer.asMeta.answering(AbilityQuery(curId: "u9", reqId: "q9"))
        #expect(a.kind == .answer(targetId: "u9", reqId: "q9"))
    }

    @Test(arguments: 0...7)
    func supportIsVideoAndTwoWay(mask: Int) throws {
        let cap = RTCCapability(rawValue: mask)
        #expect(cap.supportsTwoWayVideoCall == (mask & 2 != 0 && mask & 4 != 0))
        var a = Self.answer
        a.rtcCapability = cap
        #expect(a.envelopeData.jsonString.contains("\"support\":\(mask == 6 || mask == 7)"))
        #expect(try AbilityAnswer.decode(envelopeData: a.envelopeData) == a)
    }

    @Test func supportThatContradictsTheMaskIsRefused() throws {
        let json = Self.example.replacingOccurrences(of: "\"rtcCapability\":7", with: "\"rtcCapability\":3")
        #expect(throws: WireError.invalidValue(field: "data.support", value: "true", expected: "false for rtcCapability 3")) {
            try AbilityAnswer.decode(envelopeData: dataOf(json))
        }
    }

    @Test(arguments: [
        ("\"targetId\":\"u1\",", WireError.missingField("data.targetId")),
        ("\"reqId\":\"r1\",", WireError.missingField("data.reqId")),
        ("\"devId\":\"dev1\",", WireError.missingField("data.devId")),
        ("\"support\":true,", WireError.missingField("data.support")),
        ("\"liveView\":true,", WireError.missingField("data.liveView")),
        ("\"channelTypes\":[0,1,2],", WireError.missingField("data.channelTypes")),
    ])
    func missingAnswerFieldsAreNamed(remove: String, error: WireError) throws {
        let json = Self.example.replacingOccurrences(of: remove, with: "")
        #expect(json != Self.example)
        #expect(throws: error) { try AbilityAnswer.decode(envelopeData: dataOf(json)) }
    }

    @Test(arguments: [
        ("[0,1,2]", "[0,1,5]", WireError.invalidValue(field: "data.channelTypes[2]", value: "5", expected: "0, 1 or 2")),
        ("[1,2,3]", "[1,\"2\"]", WireError.wrongType(field: "data.callTypes[1]", expected: "integer")),
        ("\"fps\":15", "\"fps\":0", WireError.invalidValue(field: "data.video.streams[1].fps", value: "0", expected: "a positive integer")),
        ("[\"H264\"]", "[264]", WireError.wrongType(field: "data.video.codecs[0]", expected: "string")),
        ("\"type\":\"ability\"", "\"type\":\"abilities\"", WireError.invalidValue(field: "data.type", value: "'abilities'", expected: "ability_query, ability or meta")),
    ])
    func badAnswerValuesAreNamed(old: String, new: String, error: WireError) throws {
        let json = Self.example.replacingOccurrences(of: old, with: new)
        #expect(json != Self.example)
        #expect(throws: error) { try AbilityAnswer.decode(envelopeData: dataOf(json)) }
    }

    @Test func queryMissingFieldsAreNamed() throws {
        #expect(throws: WireError.missingField("data.reqId")) {
            try AbilityQuery.decode(envelopeData: dataOf(#"{"protocol":309,"t":1,"data":{"type":"ability_query","curId":"u"}}"#))
        }
        #expect(throws: WireError.missingField("data.curId")) {
            try AbilityQuery.decode(envelopeData: dataOf(#"{"protocol":309,"t":1,"data":{"type":"ability_query","reqId":"r"}}"#))
        }
        #expect(throws: WireError.missingField("data.type")) {
            try AbilityQuery.decode(envelopeData: dataOf(#"{"protocol":309,"t":1,"data":{"curId":"u","reqId":"r"}}"#))
        }
    }
}
