import Testing
@testable import IPCWire

@Suite("payload protection pv2.2 / pv2.3")
struct PayloadProtectionTests {
    static let key = "0123456789abcdef"
    static let json = bytes(#"{"data":{"curId":"u1","reqId":"r1","type":"ability_query"},"protocol":309,"t":1732200000}"#)
    static let nonce: [UInt8] = Array(0..<12)
    // Computed with Python's cryptography (AESGCM, AES-ECB + PKCS7) and zlib.crc32: seq 1000 from 2,
    // nonce 00..0b; and seq 5 from 1.
    static let pv23Vector = hex("322e33000003e80000000200000102030405060708090a0b861da07c6a15190c9304646fb2d2d40f3af522cb259f68391218a397cd91891e6f35b3cc8497e8a2481d85ff1c043148171b565f4114310f20d4a4463700b03edf2d962329ea79dea7c682e3bd4529b27cd93f5c2f6e4031d2a99e97cd5c3b09aba770e33a5157d071")
    static let pv22Vector = hex("322e324bc7f87f0000000500000001406acdee991bb2f895fe0f3721d105e10f9be8d25aab0e2106fff7771ca0389c177c88f3268e114e8a1c8b95f6dcd15fc7f756d2907f6d86b63fd1b5a017c08df3b3e6c1b8be77d824516b877e17e8bb8ee0933a878f8ea814f7be90fc764fdc")

    // MARK: known answers

    @Test func pv23SealMatchesVector() throws {
        var sealer = try PayloadSealer(mode: .pv23, localKey: Self.key, from: 2, startSeq: 1000)
        #expect(try sealer.seal(Self.json, nonce: Self.nonce) == Self.pv23Vector)
        #expect(sealer.nextSeq == 1001)
    }

    @Test func pv23OpensVector() throws {
        var opener = try PayloadOpener(mode: .pv23, localKey: Self.key)
        let opened = try opener.open(Self.pv23Vector)
        #expect(opened.json == Self.json)
        #expect(opened.header == SealHeader(seq: 1000, from: 2))
    }

    @Test func pv22SealMatchesVector() throws {
        var sealer = try PayloadSealer(mode: .pv22, localKey: Self.key, from: 1, startSeq: 5)
        #expect(try sealer.seal(Self.json) == Self.pv22Vector)
        #expect(sealer.nextSeq == 6)
    }

    @Test func pv22OpensVector() throws {
        var opener = try PayloadOpener(mode: .pv22, localKey: Self.key)
        let opened = try opener.open(Self.pv22Vector)
        #expect(opened.json == Self.json)
        #expect(opened.from == 1 && opened.seq == 5)
    }

    // MARK: round trips

    @Test(arguments: [SecurityMode.plain, .pv22, .pv23])
    func envelopesRoundTripAndSeqAdvances(mode: SecurityMode) throws {
        var sealer = try PayloadSealer(mode: mode, localKey: Self.key, from: 7, startSeq: 42)
        var opener = try PayloadOpener(mode: mode, localKey: Self.key)
        for i in 0..<3 {
            let msg = CallMessage(event: .heartbeat, curId: "u", targetId: "d", sessionId: "s\(i)")
            let payload = try sealer.seal(msg.envelope(t: 1))
            let (env, header) = try opener.openEnvelope(payload)
            #expect(try CallMessage.decode(envelopeData: env.data) == msg)
            #expect(header == (mode == .plain ? nil : SealHeader(seq: 42 + UInt32(i), from: 7)))
        }
    }

    @Test func pv23NoncesAreFresh() throws {
        var sealer = try PayloadSealer(mode: .pv23, localKey: Self.key, from: 1, startSeq: 0)
        let a = try sealer.seal(Self.json), b = try sealer.seal(Self.json)
        #expect(a[12..<24] != b[12..<24])
        #expect(a.count == PV23.minimumSize + Self.json.count)
    }

    @Test func initialSequenceFollowsTheClock() throws {
        #expect(PayloadSealer.initialSequence(unixSeconds: 1_732_200_000) == 322_000_000)
        #expect(PayloadSealer.initialSequence(unixSeconds: 1_600_000_000) == 0)
        #expect(PayloadSealer.initialSequence(unixSeconds: 2_200_000_000) == .max)
        let sealer = try PayloadSealer(mode: .pv23, localKey: Self.key, from: 1, unixSeconds: 1_700_000_001)
        #expect(sealer.nextSeq == 10)
    }

    // MARK: refusals

    @Test(arguments: [SecurityMode.pv22, .pv23])
    func tamperedByteIsRefused(mode: SecurityMode) throws {
        var sealer = try PayloadSealer(mode: mode, localKey: Self.key, from: 2, startSeq: 1)
        let payload = try sealer.seal(Self.json, nonce: Self.nonce)
        // Every byte after the prefix: seq, from, reserved, nonce, ciphertext, tag, CRC.
        for i in 3..<payload.count {
            var bad = payload
            bad[i] ^= 0x01
            var opener = try PayloadOpener(mode: mode, localKey: Self.key)
            #expect(throws: mode == .pv23 ? WireError.authenticationFailed : WireError.checksumMismatch) {
                try opener.open(bad)
            }
            #expect(opener.replayGuard.lastAccepted(from: 2) == nil)
        }
    }

    @Test func reservedByteAndHeaderAreAuthenticated() throws {
        var bad = Self.pv23Vector
        bad[11] = 1
        var opener = try PayloadOpener(mode: .pv23, localKey: Self.key)
        #expect(throws: WireError.authenticationFailed) { try opener.open(bad) }
    }

    @Test func truncatedPayloadsAreRefused() throws {
        var o23 = try PayloadOpener(mode: .pv23, localKey: Self.key)
        #expect(throws: WireError.headerTooShort(size: 2, needed: 40)) { try o23.open(Array(Self.pv23Vector.prefix(2))) }
        #expect(throws: WireError.headerTooShort(size: 39, needed: 40)) { try o23.open(Array(Self.pv23Vector.prefix(39))) }
        #expect(throws: WireError.authenticationFailed) { try o23.open(Array(Self.pv23Vector.dropLast())) }
        var o22 = try PayloadOpener(mode: .pv22, localKey: Self.key)
        #expect(throws: WireError.headerTooShort(size: 14, needed: 15)) { try o22.open(Array(Self.pv22Vector.prefix(14))) }
        #expect(throws: WireError.checksumMismatch) { try o22.open(Array(Self.pv22Vector.dropLast())) }
        // A well-formed frame whose ciphertext is not whole blocks (CRC recomputed).
        var body = Array(Self.pv22Vector.dropFirst(7).dropLast(3))
        var short = bytes("2.2")
        short.appendBigEndian(CRC32.checksum(body))
        short += body
        #expect(throws: WireError.decryptionFailed("ciphertext of \(body.count - 8) bytes is not a positive multiple of 16")) {
            try o22.open(short)
        }
        body = Array(body.prefix(8))
        short = bytes("2.2")
        short.appendBigEndian(CRC32.checksum(body))
        short += body
        #expect(throws: WireError.decryptionFailed("ciphertext of 0 bytes is not a positive multiple of 16")) {
            try o22.open(short)
        }
    }

    @Test func wrongVersionPrefixIsRefused() throws {
        var o23 = try PayloadOpener(mode: .pv23, localKey: Self.key)
        #expect(throws: WireError.wrongVersionPrefix("2.2")) { try o23.open(Self.pv22Vector) }
        #expect(throws: WireError.wrongVersionPrefix("{\"d")) { try o23.open(Self.json) }
        var o22 = try PayloadOpener(mode: .pv22, localKey: Self.key)
        #expect(throws: WireError.wrongVersionPrefix("2.3")) { try o22.open(Self.pv23Vector) }
        #expect(throws: WireError.wrongVersionPrefix("0x00ff01")) { try o22.open([0, 0xFF, 1, 2]) }
    }

    @Test func wrongKeyIsRefused() throws {
        var o23 = try PayloadOpener(mode: .pv23, localKey: "fedcba9876543210")
        #expect(throws: WireError.authenticationFailed) { try o23.open(Self.pv23Vector) }
        // pv2.2: the CRC passes (the bytes are as sent), the plaintext does not.
        for other in ["fedcba9876543210", "0123456789abcdeF", "AAAAAAAAAAAAAAAA"] {
            var o22 = try PayloadOpener(mode: .pv22, localKey: other)
            #expect {
                try o22.open(Self.pv22Vector)
            } throws: { error in
                if case WireError.wrongKey? = error as? WireError { return true }
                return false
            }
        }
    }

    @Test func invalidLocalKeysAreRefusedClearly() throws {
        for bad in ["short", "0123456789abcdef0", "0123456789abcdé", ""] {
            #expect {
                _ = try PayloadOpener(mode: .pv23, localKey: bad)
            } throws: { error in
                if case WireError.invalidKey(let why)? = error as? WireError { return why.contains("16") && !why.contains(bad.isEmpty ? "\u{0}" : bad) }
                return false
            }
            #expect(throws: WireError.self) { _ = try PayloadSealer(mode: .pv22, localKey: bad, from: 1, startSeq: 0) }
        }
        // Plain mode needs no key.
        _ = try PayloadOpener(mode: .plain, localKey: "")
        #expect(throws: WireError.self) { _ = try PayloadSealer(mode: .pv23, localKey: Self.key, from: 0, startSeq: 0) }
    }

    @Test(arguments: [SecurityMode.plain, .pv22, .pv23])
    func oversizePayloadIsRefusedBeforeAnythingElse(mode: SecurityMode) throws {
        var opener = try PayloadOpener(mode: mode, localKey: Self.key)
        let big = [UInt8](repeating: 0x41, count: maxPayloadBytes + 1)
        #expect(throws: WireError.payloadTooLarge(size: maxPayloadBytes + 1, limit: maxPayloadBytes)) { try opener.open(big) }
        var sealer = try PayloadSealer(mode: mode, localKey: Self.key, from: 1, startSeq: 9)
        let json = bytes("{\"x\":\"") + [UInt8](repeating: 0x41, count: maxPayloadBytes) + bytes("\"}")
        #expect(throws: WireError.self) { try sealer.seal(json) }
        #expect(sealer.nextSeq == 9)
    }

    // MARK: replay

    @Test(arguments: [SecurityMode.pv22, .pv23])
    func replayedSeqIsRefused(mode: SecurityMode) throws {
        var sealer = try PayloadSealer(mode: mode, localKey: Self.key, from: 2, startSeq: 100)
        var opener = try PayloadOpener(mode: mode, localKey: Self.key)
        let first = try sealer.seal(Self.json)
        let second = try sealer.seal(Self.json)
        _ = try opener.open(second)
        #expect(throws: WireError.replayed(from: 2, seq: 101, lastAccepted: 101)) { try opener.open(second) }
        #expect(throws: WireError.replayed(from: 2, seq: 100, lastAccepted: 101)) { try opener.open(first) }
        #expect(opener.replayGuard.lastAccepted(from: 2) == 101)
        #expect(try opener.open(try sealer.seal(Self.json)).seq == 102)
    }

    @Test func eachFromHasItsOwnCounter() throws {
        var app = try PayloadSealer(mode: .pv23, localKey: Self.key, from: 2, startSeq: 500)
        var otherApp = try PayloadSealer(mode: .pv23, localKey: Self.key, from: 0x8000_0003, startSeq: 10)
        var opener = try PayloadOpener(mode: .pv23, localKey: Self.key)
        #expect(try opener.open(try app.seal(Self.json)).seq == 500)
        // A lower seq from another sender is fresh for that sender.
        #expect(try opener.open(try otherApp.seal(Self.json)).seq == 10)
        #expect(opener.replayGuard.lastAccepted(from: 2) == 500)
        #expect(opener.replayGuard.lastAccepted(from: 0x8000_0003) == 10)
        #expect(try opener.open(try app.seal(Self.json)).seq == 501)
    }

    @Test(arguments: [SecurityMode.pv22, .pv23])
    func rejectedMessageDoesNotAdvanceState(mode: SecurityMode) throws {
        var sealer = try PayloadSealer(mode: mode, localKey: Self.key, from: 2, startSeq: 100)
        var opener = try PayloadOpener(mode: mode, localKey: Self.key)
        _ = try opener.open(try sealer.seal(Self.json))  // seq 100
        // seq 101, tampered: refused, so the genuine 101 is still fresh afterwards.
        let genuine = try sealer.seal(Self.json)
        var tampered = genuine
        tampered[tampered.count - 1] ^= 0x80
        #expect(throws: WireError.self) { try opener.open(tampered) }
        #expect(opener.replayGuard.lastAccepted(from: 2) == 100)
        // A sealed payload that opens but whose envelope does not decode leaves no trace either.
        let notAnEnvelope = try sealer.seal(bytes(#"{"protocol":999,"t":1,"data":{}}"#))  // seq 102
        #expect(throws: WireError.unknownProtocol(999)) { try opener.openEnvelope(notAnEnvelope) }
        #expect(opener.replayGuard.lastAccepted(from: 2) == 100)
        // Nor does one whose envelope decodes but whose body does not.
        let badBody = try sealer.seal(bytes(#"{"protocol":309,"t":1,"data":{"type":"ability_query"}}"#))  // seq 103
        #expect(throws: WireError.missingField("data.curId")) { try opener.openMessage(badBody) }
        #expect(opener.replayGuard.lastAccepted(from: 2) == 100)
        #expect(try opener.open(genuine).seq == 101)
        #expect(try opener.open(notAnEnvelope).seq == 102)
        let good = try sealer.seal(AbilityQuery(curId: "u", reqId: "r").envelope(t: 1))  // seq 104
        let opened = try opener.openMessage(good)
        #expect(opened.message == .abilityQuery(AbilityQuery(curId: "u", reqId: "r")))
        #expect(opened.header == SealHeader(seq: 104, from: 2))
        #expect(opener.replayGuard.lastAccepted(from: 2) == 104)
    }

    @Test func securityModeParsesProfileStrings() throws {
        #expect(try SecurityMode(profileValue: "plain") == .plain)
        #expect(try SecurityMode(profileValue: "pv2.2") == .pv22)
        #expect(try SecurityMode(profileValue: "pv2.3") == .pv23)
        #expect(throws: WireError.self) { try SecurityMode(profileValue: "2.3") }
    }
}
