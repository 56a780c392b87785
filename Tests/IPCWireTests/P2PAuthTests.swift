import Testing
@testable import IPCWire

@Suite("302 offer auth")
struct P2PAuthTests {
    // base64(HMAC-SHA256(b"p2pSecret:0123456789abcdef", b"6c1e2f3a4b5c6d7e8f")) with Python's hmac.
    let expected = "r13qWa5h3w7A3SG+zkhoNxF10C6Qi/GPoYalY7M6p74="

    @Test func knownAnswer() {
        #expect(P2PAuth.compute(p2pPassword: "p2pSecret", localKey: "0123456789abcdef", devId: "6c1e2f3a4b5c6d7e8f") == expected)
    }

    @Test func verifyAcceptsOnlyTheRightValue() {
        let args = (p2pPassword: "p2pSecret", localKey: "0123456789abcdef", devId: "6c1e2f3a4b5c6d7e8f")
        #expect(P2PAuth.verify(expected, p2pPassword: args.p2pPassword, localKey: args.localKey, devId: args.devId))
        var flipped = Array(expected.utf8)
        flipped[5] ^= 1
        for wrong in [String(decoding: flipped, as: UTF8.self), String(expected.dropLast()), expected + "=", ""] {
            #expect(!P2PAuth.verify(wrong, p2pPassword: args.p2pPassword, localKey: args.localKey, devId: args.devId))
        }
        #expect(!P2PAuth.verify(expected, p2pPassword: "other", localKey: args.localKey, devId: args.devId))
        #expect(!P2PAuth.verify(expected, p2pPassword: args.p2pPassword, localKey: args.localKey, devId: "dev2"))
    }
}
