import Testing
@testable import WebRTCLink

@Test func placeholderCompiles() {
    #expect(ICECandidate.normalizedLine("a=candidate:1 1 udp 1 127.0.0.1 5000 typ host\r\n") == "candidate:1 1 udp 1 127.0.0.1 5000 typ host")
}
