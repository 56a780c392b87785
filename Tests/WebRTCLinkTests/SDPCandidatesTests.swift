import Testing
import WebRTCLink

@Suite("SDP candidate merge (the console's one-shot answer)") struct SDPCandidatesMerge {
    static let answer = "v=0\r\no=- 1 0 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\na=group:BUNDLE video0 audio1\r\n"
        + "m=video 9 UDP/TLS/RTP/SAVPF 96\r\nc=IN IP4 0.0.0.0\r\na=mid:video0\r\na=rtpmap:96 H264/90000\r\n"
        + "m=audio 9 UDP/TLS/RTP/SAVPF 8\r\nc=IN IP4 0.0.0.0\r\na=mid:audio1\r\na=rtpmap:8 PCMA/8000\r\n"

    @Test("candidates go at the end of the m-section their index names, as a=candidate lines with CRLF")
    func placesBySection() {
        let merged = SDPCandidates.merge(Self.answer, candidates: [
            ("a=candidate:1 1 UDP 2015363327 127.0.0.1 40000 typ host\r\n", 0),
            ("candidate:2 1 UDP 2015363071 10.0.0.5 40001 typ host", 0),
            ("candidate:3 1 UDP 2015362815 10.0.0.6 40002 typ host", 1),
        ])
        let lines = merged.components(separatedBy: "\r\n")
        let c1 = lines.firstIndex(of: "a=candidate:1 1 UDP 2015363327 127.0.0.1 40000 typ host")
        let c2 = lines.firstIndex(of: "a=candidate:2 1 UDP 2015363071 10.0.0.5 40001 typ host")
        let c3 = lines.firstIndex(of: "a=candidate:3 1 UDP 2015362815 10.0.0.6 40002 typ host")
        let video = lines.firstIndex(of: "a=rtpmap:96 H264/90000")
        let audio = lines.firstIndex(where: { $0.hasPrefix("m=audio") })
        #expect(c1 != nil && c2 != nil && c3 != nil)
        if let c1, let c2, let c3, let video, let audio {
            #expect(video < c1 && c1 < c2 && c2 < audio, "first section's candidates after its last line, in order")
            #expect(c3 > audio && c3 == lines.count - 2, "second section's at the very end")
        }
        #expect(merged.hasSuffix("\r\n"))
        #expect(!merged.contains("\r\n\r\n"))
        #expect(merged.replacingOccurrences(of: "\r\n", with: "").contains("\n") == false)
    }

    @Test("end of candidates, duplicates, non-candidates and bad indexes")
    func edgeCases() {
        let line = "a=candidate:1 1 UDP 1 127.0.0.1 4 typ host"
        let merged = SDPCandidates.merge(Self.answer.replacingOccurrences(of: "\r\n", with: "\n"), candidates: [
            (line, 7), ("", 0), (line + "\r\n", 0), ("a=end-of-candidates", 0),
        ])
        #expect(merged.components(separatedBy: line).count == 2, "exactly once")
        #expect(!merged.contains("end-of-candidates"))
        let lines = merged.components(separatedBy: "\r\n")
        if let at = lines.firstIndex(of: line), let audio = lines.firstIndex(where: { $0.hasPrefix("m=audio") }) {
            #expect(at < audio, "an index past the sections goes to the first (BUNDLE)")
        } else {
            Issue.record("candidate missing: \(merged)")
        }
        #expect(SDPCandidates.merge(Self.answer, candidates: []) == Self.answer)
        let already = SDPCandidates.merge(Self.answer, candidates: [(line, 0)])
        #expect(SDPCandidates.merge(already, candidates: [(line, 1)]) == already, "a line the SDP has is not repeated")
    }
}
