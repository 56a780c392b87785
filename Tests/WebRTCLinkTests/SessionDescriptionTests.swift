import Testing
@testable import WebRTCLink

/// An offer like a browser's: several H.264 payloads (mode 0 first, then High, then constrained
/// baseline), audio with Opus and PCMA.
private let browserLikeOffer = """
    v=0\r
    o=- 1 2 IN IP4 127.0.0.1\r
    s=-\r
    t=0 0\r
    a=group:BUNDLE 0 1\r
    m=audio 9 UDP/TLS/RTP/SAVPF 111 8 0\r
    c=IN IP4 0.0.0.0\r
    a=mid:0\r
    a=recvonly\r
    a=rtcp-mux\r
    a=rtpmap:111 opus/48000/2\r
    a=rtpmap:8 PCMA/8000\r
    a=rtpmap:0 PCMU/8000\r
    m=video 9 UDP/TLS/RTP/SAVPF 102 100 127\r
    c=IN IP4 0.0.0.0\r
    a=mid:1\r
    a=sendrecv\r
    a=rtcp-mux\r
    a=rtpmap:102 H264/90000\r
    a=fmtp:102 level-asymmetry-allowed=1;packetization-mode=0;profile-level-id=42e01f\r
    a=rtpmap:100 H264/90000\r
    a=fmtp:100 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=640c1f\r
    a=rtpmap:127 H264/90000\r
    a=fmtp:127 level-asymmetry-allowed=1; packetization-mode=1; profile-level-id=42E01F\r

    """

@Test func summaryReadsSectionsDirectionsAndPayloads() throws {
    let summary = try SessionDescriptionSummary(parsing: browserLikeOffer)
    #expect(summary.bundle == ["0", "1"])
    #expect(summary.sections.map(\.kind) == ["audio", "video"])
    #expect(summary.sections.map(\.direction) == [.recvonly, .sendrecv])
    let audio = try #require(summary.firstSection(kind: "audio"))
    #expect(audio.payloads.map(\.encoding) == ["OPUS", "PCMA", "PCMU"])
    #expect(audio.payloads[0].channels == 2)
    #expect(audio.rtcpMux)
    let video = try #require(summary.firstSection(kind: "video"))
    #expect(video.payloads.map(\.payloadType) == [102, 100, 127])
    #expect(video.payloads[2].packetizationMode == 1)
    #expect(video.payloads[2].profileLevelID == "42e01f")
}

@Test func planPicksConstrainedBaselineModeOneAndPCMA() throws {
    let plan = try AnswerPlan(offer: browserLikeOffer)
    #expect(plan.videoPayload?.payloadType == 127)
    #expect(plan.answerProfileLevelID == "42e01f")
    #expect(plan.receivesVideo)
    #expect(plan.audioCodec == .pcma)
    #expect(plan.audioPayloadType == 8)
    #expect(!plan.receivesAudio)
}

@Test func planFallsBackToOpusWithoutPCMA() throws {
    let offer = browserLikeOffer.replacingOccurrences(of: " 111 8 0\r", with: " 111\r")
        .replacingOccurrences(of: "a=rtpmap:8 PCMA/8000\r\n", with: "")
        .replacingOccurrences(of: "a=rtpmap:0 PCMU/8000\r\n", with: "")
    let plan = try AnswerPlan(offer: offer)
    #expect(plan.audioCodec == .opus)
    #expect(plan.audioPayloadType == 111)
}

@Test func planRejectsVideoWithoutPacketizationModeOne() {
    let offer = browserLikeOffer.replacingOccurrences(of: "packetization-mode=1", with: "packetization-mode=0")
    #expect(throws: WebRTCLinkError.noCompatibleVideoCodec) { try AnswerPlan(offer: offer) }
}

@Test(arguments: ["", "hello", "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n"])
func planRejectsTextThatIsNotAnOfferWithMedia(_ text: String) {
    #expect(throws: WebRTCLinkError.self) { try AnswerPlan(offer: text) }
}

@Test func baselineWithoutConstraintFlagStatesConstrainedBaseline() throws {
    let offer = browserLikeOffer.replacingOccurrences(of: "42E01F", with: "42001f")
    let plan = try AnswerPlan(offer: offer)
    #expect(plan.videoPayload?.profileLevelID == "42001f")
    #expect(plan.answerProfileLevelID == "42e01f")
}

@Test func candidateLinesAreAcceptedInEveryForm() {
    let bare = "candidate:1 1 UDP 2015363327 127.0.0.1 40000 typ host"
    #expect(ICECandidate.normalizedLine("a=\(bare)\r\n") == bare)
    #expect(ICECandidate.normalizedLine(bare) == bare)
    #expect(ICECandidate.normalizedLine("a=\(bare)") == bare)
    #expect(ICECandidate.normalizedLine("\(bare)\r\n") == bare)
    #expect(ICECandidate.normalizedLine("") == "")
    #expect(ICECandidate.normalizedLine("\r\n") == "")
    #expect(ICECandidate(candidate: bare, sdpMLineIndex: 0).attributeLine == "a=\(bare)\r\n")
    #expect(ICECandidate(candidate: "", sdpMLineIndex: 0).isEndOfCandidates)
}

@Test func iceServerURLsBecomeWebrtcbinURIs() {
    #expect(ICEURL.stunServer("stun:stun.example.org") == "stun://stun.example.org:3478")
    #expect(ICEURL.stunServer("stun:127.0.0.1:19302") == "stun://127.0.0.1:19302")
    #expect(ICEURL.stunServer("turn:x") == nil)
    #expect(
        ICEURL.turnServer("turn:relay.example.org:3478?transport=udp", username: "1732:dev", credential: "p/w+=")
            == "turn://1732%3Adev:p%2Fw%2B%3D@relay.example.org:3478?transport=udp")
    #expect(ICEURL.turnServer("turns:relay.example.org", username: "u", credential: "c") == "turns://u:c@relay.example.org:5349")
    #expect(ICEURL.turnServer("stun:x", username: "", credential: "") == nil)
}

@Test func answerEditingStatesProfileLevelID() {
    let answer = "v=0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\na=rtpmap:96 H264/90000\r\na=fmtp:96 packetization-mode=1;level-asymmetry-allowed=1\r\n"
    let edited = SDPEditing.settingH264ProfileLevelID(in: answer, payloadType: 96, profileLevelID: "42e01f")
    #expect(edited.contains("a=fmtp:96 packetization-mode=1;level-asymmetry-allowed=1;profile-level-id=42e01f\r\n"))
    let noFmtp = "v=0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\na=rtpmap:96 H264/90000\r\n"
    #expect(
        SDPEditing.settingH264ProfileLevelID(in: noFmtp, payloadType: 96, profileLevelID: "42c01f")
            .contains("a=rtpmap:96 H264/90000\r\na=fmtp:96 packetization-mode=1;profile-level-id=42c01f\r\n"))
}

@Test func theDeviceTakesTheDTLSServerRoleOnlyWhenTheOfferLeavesItTheChoice() {
    let answer = "v=0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\na=setup:active\r\nm=audio 9 UDP/TLS/RTP/SAVPF 8\r\na=setup:active\r\n"
    let edited = SDPEditing.answeringAsDTLSServer(answer, offer: "v=0\r\na=setup:actpass\r\n")
    #expect(!edited.contains("a=setup:active"))
    #expect(edited.components(separatedBy: "a=setup:passive").count == 3)
    // An offer that chose its role (active: the app is the client) keeps webrtcbin's answer.
    let passive = "v=0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\na=setup:passive\r\n"
    #expect(SDPEditing.answeringAsDTLSServer(passive, offer: "v=0\r\na=setup:active\r\n") == passive)
    #expect(SDPEditing.answeringAsDTLSServer(answer, offer: "v=0\r\na=setup:passive\r\n") == answer)
}

@Test func i420SizeFollowsGStreamersDefaultLayout() {
    #expect(WebRTCAnswerer.i420Size(width: 1280, height: 720) == 1280 * 720 * 3 / 2)
    #expect(WebRTCAnswerer.i420Size(width: 320, height: 240) == 115_200)
    // Odd sizes: rows padded to 4 bytes, height rounded up to even.
    #expect(WebRTCAnswerer.i420Size(width: 322, height: 241) == 324 * 242 + 2 * 164 * 121)
}
