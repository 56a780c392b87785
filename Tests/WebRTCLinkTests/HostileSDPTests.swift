import Testing
@testable import WebRTCLink

/// SDP text comes from the wire (a 302 offer): no line of it may trap the reader (issue 10). Each
/// case once indexed what `split` returned, or is a neighbour of one that did.
@Suite("SDP reader: malformed lines")
struct HostileSDPTests {
    private func offer(_ lines: [String]) -> String {
        (["v=0", "o=- 1 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "m=video 9 UDP/TLS/RTP/SAVPF 96",
          "a=rtpmap:96 H264/90000"] + lines).joined(separator: "\r\n") + "\r\n"
    }

    @Test("fmtp parameters without a key are skipped", arguments: [
        "a=fmtp:96 =", "a=fmtp:96 ;=;", "a=fmtp:96 ==", "a=fmtp:96 ;;;", "a=fmtp:96  = ; =x",
        "a=fmtp:96 =1;packetization-mode=1", "a=fmtp:96 packetization-mode=1;=;",
    ])
    func fmtpWithoutKey(_ line: String) throws {
        let summary = try SessionDescriptionSummary(parsing: offer([line]))
        let video = try #require(summary.firstSection(kind: "video"))
        #expect(video.payloads.count == 1)
        #expect(video.payloads[0].parameters[""] == nil)
        if line.contains("packetization-mode=1") { #expect(video.payloads[0].packetizationMode == 1) }
    }

    @Test("other malformed attribute and media lines never trap", arguments: [
        "a=fmtp:", "a=fmtp:96", "a=fmtp:x y", "a=fmtp:99999999999999999999999 a=b", "a=rtpmap:", "a=rtpmap:96",
        "a=rtpmap:96 ", "a=rtpmap:96 /", "a=rtpmap:96 H264/", "a=rtpmap:96 H264/x/y/z", "a=rtpmap:-1 X/1",
        "a=group:BUNDLE", "a=mid:", "a=", "a", "m=", "m=video", "m=video 9", "m=video 9 RTP 1 2 3 x -5",
        "a=fmtp:96 packetization-mode=99999999999999999999", "a=fmtp:96 profile-level-id=zz",
        "a=fmtp:96 profile-level-id=42", "a=fmtp:96 profile-level-id=42ZZ1f", "\u{0}\u{1}\u{7f}", "a=fmtp:96 \u{0}=\u{0}",
    ])
    func malformedLines(_ line: String) {
        // Either a summary or a named error; never a trap.
        if let summary = try? SessionDescriptionSummary(parsing: offer([line])) {
            _ = summary.firstSection(kind: "video")?.preferredH264
            _ = summary.firstSection(kind: "video")?.payload(encoding: "H264")
        }
    }

    @Test("text that is not SDP is refused with a named error", arguments: ["", "\r\n", "x", "m=video 9 RTP 96", "v=0"])
    func notSDP(_ text: String) {
        #expect(throws: WebRTCLinkError.self) { try SessionDescriptionSummary(parsing: text) }
    }
}
