import Foundation
import Testing
@testable import IPCWire

@Suite("302 WebRTC signalling")
struct SignalMessageTests {
    let header = SignalHeader(from: "u1", to: "dev1", sessionId: "dev1abc123", subDevId: "", motoId: "moto9", tid: "t1")

    func roundTrip(_ msg: SignalMessage) throws -> SignalMessage {
        let env = try Envelope.decode(msg.envelope(t: 1_732_200_000).encoded())
        #expect(env.protocolNumber == .webrtcSignalling)
        return try SignalMessage.decode(envelopeData: env.data)
    }

    @Test func offerRoundTrips() throws {
        let offer = SignalOffer(sdp: "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\n", streamType: .sub, auth: "abc=",
                                iceServers: [ICEServer(urls: ["stun:stun.example:3478"], username: "", credential: "", ttl: 0),
                                             ICEServer(urls: ["turn:a", "turn:b"], username: "u", credential: "c", ttl: 600)])
        let msg = SignalMessage(header: header, body: .offer(offer))
        #expect(try roundTrip(msg) == msg)
        #expect(msg.type == .offer)
    }

    @Test func answerDisconnectCandidateRoundTrip() throws {
        for body: SignalBody in [
            .answer(SignalAnswer(sdp: "v=0\r\n")),
            .disconnect(SignalDisconnect(closeReason: SignalDisconnect.unauthorised)),
            .candidate(ICECandidate(candidate: "candidate:1 1 UDP 2122252543 127.0.0.1 40000 typ host", sdpMLineIndex: 0, sdpMid: "0")),
            .candidate(ICECandidate(candidate: "candidate:2 1 UDP 1 10.0.0.1 5000 typ host")),
            .candidate(.endOfCandidates()),
        ] {
            let msg = SignalMessage(header: header.reply(), body: body)
            #expect(try roundTrip(msg) == msg)
        }
    }

    @Test("resolution (PROTOCOL.md 4): round trip, the spec's form, any integer value decodes, a missing value is named")
    func resolution() throws {
        for value: Int64 in [0, 1, 7, -1] {
            let msg = SignalMessage(header: header, body: .resolution(SignalResolution(value: value)))
            #expect(try roundTrip(msg) == msg)
            #expect(msg.type == .resolution)
        }
        #expect(SignalResolution(value: 0).streamType == .main)
        #expect(SignalResolution(value: 1).streamType == .sub)
        #expect(SignalResolution(value: 2).streamType == nil)
        #expect(SignalResolution(value: Int64.min).streamType == nil)
        let json = #"""
        {"protocol":302,"pv":"2.2","t":1732200000,"data":{
          "header":{"type":"resolution","from":"u1","to":"dev1","sessionid":"s1"},
          "msg":{"mode":"webrtc","value":1}}}
        """#
        let decoded = try SignalMessage.decode(envelopeData: try Envelope.decode(Array(json.utf8)).data)
        #expect(decoded.body == .resolution(SignalResolution(streamType: .sub)))
        let missing = json.replacingOccurrences(of: #","value":1"#, with: "")
        #expect(throws: WireError.self) { try SignalMessage.decode(envelopeData: try Envelope.decode(Array(missing.utf8)).data) }
    }

    @Test func decodesTheProtocolExample() throws {
        let json = #"""
        {"protocol":302,"pv":"2.2","t":1732200000,"data":{
          "header":{"type":"offer","from":"u1","to":"dev1","sub_dev_id":"",
                    "sessionid":"s1","moto_id":"m1","tid":""},
          "msg":{"mode":"webrtc","sdp":"v=0...","stream_type":0,"auth":"xyz",
                 "token":[{"urls":"stun:x","username":"","credential":"","ttl":0}]}}}
        """#
        let msg = try SignalMessage.decode(envelopeData: dataOf(json))
        #expect(msg.header == SignalHeader(from: "u1", to: "dev1", sessionId: "s1", motoId: "m1"))
        guard case .offer(let offer) = msg.body else { Issue.record("not an offer"); return }
        #expect(offer.streamType == .main)
        #expect(offer.auth == "xyz")
        #expect(offer.iceServers == [ICEServer(urls: ["stun:x"], username: "", credential: "", ttl: 0)])
    }

    @Test func replyHeaderSwapsAndEchoes() {
        let r = header.reply()
        #expect(r.from == "dev1" && r.to == "u1")
        #expect(r.motoId == "moto9" && r.sessionId == header.sessionId && r.tid == "t1")
    }

    @Test("candidate line with or without a= and CRLF", arguments: [
        "a=candidate:1 1 UDP 2122252543 192.168.1.2 50000 typ host\r\n",
        "candidate:1 1 UDP 2122252543 192.168.1.2 50000 typ host",
        "a=candidate:1 1 UDP 2122252543 192.168.1.2 50000 typ host",
        "candidate:1 1 UDP 2122252543 192.168.1.2 50000 typ host\r\n",
        "candidate:1 1 UDP 2122252543 192.168.1.2 50000 typ host\n",
    ])
    func candidateIsNormalised(line: String) throws {
        let json = #"{"protocol":302,"t":1,"data":{"header":{"type":"candidate","from":"u","to":"d","sessionid":"s"},"msg":{"mode":"webrtc","candidate":"#
            + JSONValue.string(line).jsonString + "}}}"
        let msg = try SignalMessage.decode(envelopeData: dataOf(json))
        guard case .candidate(let c) = msg.body else { Issue.record("not a candidate"); return }
        #expect(c.candidate == "candidate:1 1 UDP 2122252543 192.168.1.2 50000 typ host")
        #expect(c.sdpMLineIndex == nil && c.effectiveMLineIndex == 0)
        #expect(c.wireLine == "a=candidate:1 1 UDP 2122252543 192.168.1.2 50000 typ host\r\n")
        #expect(!c.isEndOfCandidates)
    }

    @Test(arguments: ["", "\r\n", "a=end-of-candidates\r\n"])
    func emptyCandidateIsEndOfCandidates(line: String) throws {
        let json = #"{"protocol":302,"t":1,"data":{"header":{"type":"candidate","from":"u","to":"d","sessionid":"s"},"msg":{"mode":"webrtc","candidate":"#
            + JSONValue.string(line).jsonString + #","sdpMLineIndex":0}}}"#
        guard case .candidate(let c) = try SignalMessage.decode(envelopeData: dataOf(json)).body else {
            Issue.record("not a candidate"); return
        }
        #expect(c.isEndOfCandidates)
        #expect(c.sdpMLineIndex == 0)
    }

    @Test func candidateThatIsNotACandidateLineIsRefused() throws {
        let json = #"{"protocol":302,"t":1,"data":{"header":{"type":"candidate","from":"u","to":"d","sessionid":"s"},"msg":{"mode":"webrtc","candidate":"a=fingerprint:sha-256 AB"}}}"#
        #expect {
            try SignalMessage.decode(envelopeData: dataOf(json))
        } throws: { error in
            if case WireError.invalidValue(field: "data.msg.candidate", _, _)? = error as? WireError { return true }
            return false
        }
    }

    static let base = #"{"protocol":302,"t":1,"data":{"header":{"type":"offer","from":"u","to":"d","sub_dev_id":"","sessionid":"s","moto_id":"","tid":""},"msg":{"mode":"webrtc","sdp":"v=0","stream_type":0,"auth":"a","token":[]}}}"#

    /// Each required field removed in turn must be named by its path.
    @Test(arguments: [
        ("\"type\":\"offer\",", "data.header.type"),
        ("\"from\":\"u\",", "data.header.from"),
        ("\"to\":\"d\",", "data.header.to"),
        ("\"sessionid\":\"s\",", "data.header.sessionid"),
        ("\"mode\":\"webrtc\",", "data.msg.mode"),
        ("\"sdp\":\"v=0\",", "data.msg.sdp"),
        ("\"stream_type\":0,", "data.msg.stream_type"),
        ("\"auth\":\"a\",", "data.msg.auth"),
    ])
    func missingFieldIsNamed(remove: String, path: String) throws {
        let json = Self.base.replacingOccurrences(of: remove, with: "")
        #expect(json != Self.base)
        #expect(throws: WireError.missingField(path)) { try SignalMessage.decode(envelopeData: dataOf(json)) }
    }

    @Test func missingHeaderAndMsgAreNamed() throws {
        let noMsg = #"{"protocol":302,"t":1,"data":{"header":{"type":"answer","from":"d","to":"u","sessionid":"s"}}}"#
        #expect(throws: WireError.missingField("data.msg")) { try SignalMessage.decode(envelopeData: dataOf(noMsg)) }
        let noHeader = #"{"protocol":302,"t":1,"data":{"msg":{"mode":"webrtc","sdp":"v=0"}}}"#
        #expect(throws: WireError.missingField("data.header")) { try SignalMessage.decode(envelopeData: dataOf(noHeader)) }
        let noReason = #"{"protocol":302,"t":1,"data":{"header":{"type":"disconnect","from":"d","to":"u","sessionid":"s"},"msg":{"mode":"webrtc"}}}"#
        #expect(throws: WireError.missingField("data.msg.close_reason")) { try SignalMessage.decode(envelopeData: dataOf(noReason)) }
    }

    @Test(arguments: [
        ("\"sessionid\":\"s\"", "\"sessionid\":5", WireError.wrongType(field: "data.header.sessionid", expected: "string")),
        ("\"stream_type\":0", "\"stream_type\":\"0\"", WireError.wrongType(field: "data.msg.stream_type", expected: "integer")),
        ("\"stream_type\":0", "\"stream_type\":2", WireError.invalidValue(field: "data.msg.stream_type", value: "2", expected: "0 (main) or 1 (sub)")),
        ("\"token\":[]", "\"token\":{}", WireError.wrongType(field: "data.msg.token", expected: "array")),
        ("\"token\":[]", "\"token\":[{\"username\":\"\"}]", WireError.missingField("data.msg.token[0].urls")),
        ("\"token\":[]", "\"token\":[{\"urls\":[\"stun:a\",3]}]", WireError.wrongType(field: "data.msg.token[0].urls[1]", expected: "string")),
        ("\"moto_id\":\"\"", "\"moto_id\":false", WireError.wrongType(field: "data.header.moto_id", expected: "string")),
        ("\"type\":\"offer\"", "\"type\":\"bye\"", WireError.invalidValue(field: "data.header.type", value: "'bye'", expected: "offer, answer, candidate, disconnect or resolution")),
    ])
    func wrongTypesAreNamed(old: String, new: String, error: WireError) throws {
        let json = Self.base.replacingOccurrences(of: old, with: new)
        #expect(json != Self.base)
        #expect(throws: error) { try SignalMessage.decode(envelopeData: dataOf(json)) }
    }

    @Test func absentOptionalHeaderFieldsAndTokenReadAsEmpty() throws {
        let json = #"{"protocol":302,"t":1,"data":{"header":{"type":"offer","from":"u","to":"d","sessionid":"s"},"msg":{"mode":"webrtc","sdp":"v=0","stream_type":1,"auth":"a"}}}"#
        let msg = try SignalMessage.decode(envelopeData: dataOf(json))
        #expect(msg.header == SignalHeader(from: "u", to: "d", sessionId: "s"))
        guard case .offer(let o) = msg.body else { Issue.record("not an offer"); return }
        #expect(o.iceServers.isEmpty && o.streamType == .sub)
    }
}
