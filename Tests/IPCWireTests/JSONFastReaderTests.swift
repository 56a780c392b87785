import Foundation
import Testing
import TestSupport
@testable import IPCWire

/// The fast JSON reader answers only where `JSONDecoder` gives the same value (issue 23): compared
/// with the reference reader on the committed wire fuzz seeds, every truncation of them and many
/// one-byte changes, and on hand-picked edge cases.
@Suite("fast JSON reader agrees with JSONDecoder")
struct JSONFastReaderTests {
    /// The fast reader's answer (nil: it passes) must be the reference reader's value.
    static func agree(_ input: [UInt8]) -> String? {
        guard let fast = input.withUnsafeBufferPointer({ JSONFastReader.read($0) }) else { return nil }
        do {
            let reference = try JSONValue.parseWithFoundation(input)
            return reference == fast ? nil : "fast \(fast) != reference \(reference) for \(String(decoding: input, as: UTF8.self))"
        } catch {
            return "fast read \(fast) where JSONDecoder refuses (\(error)): \(String(decoding: input, as: UTF8.self))"
        }
    }

    static func corpus() throws -> [[UInt8]] {
        let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Fuzz/corpus/wire").standardized
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        // Byte 0 of a seed is the fuzzer's mode byte (Fuzz/Sources/FuzzWire); the payload follows.
        return try names.map { Array(try Data(contentsOf: dir.appendingPathComponent($0)).dropFirst()) }
    }

    /// CPU-bound for seconds (thousands of variants, and every refusal a thrown error whose
    /// backtrace the test library captures): on a thread of its own, not a cooperative one.
    @Test(.heavy) func fuzzSeedsTheirTruncationsAndOneByteChangesAgree() async throws {
        let seeds = try Self.corpus()
        let (fastAnswered, checked, problems) = await offThePool { Self.compare(seeds) }
        for problem in problems { Issue.record(Comment(rawValue: problem)) }
        // The seeds are real wire messages: the fast path reads most of them itself.
        #expect(seeds.count > 20)
        #expect(fastAnswered * 2 > seeds.count, "fast path read \(fastAnswered) of \(seeds.count) seeds")
        #expect(checked > 5000)
    }

    /// Each seed, its truncations and one-byte changes through both readers: how many seeds the fast
    /// reader answered, how many inputs were checked, and where the readers disagreed.
    static func compare(_ seeds: [[UInt8]]) -> (fastAnswered: Int, checked: Int, problems: [String]) {
        var fastAnswered = 0, checked = 0
        var problems: [String] = []
        let replacements: [UInt8] = Array("\"\\{}[],:0-.e tn/\u{7F}".utf8) + [0x00, 0x0C, 0xC3, 0xFF]
        for seed in seeds {
            if seed.withUnsafeBufferPointer({ JSONFastReader.read($0) }) != nil { fastAnswered += 1 }
            var variants: [[UInt8]] = [seed]
            for cut in 0..<seed.count { variants.append(Array(seed[..<cut])) }
            for position in stride(from: 0, to: seed.count, by: max(1, seed.count / 40)) {
                for byte in replacements {
                    var changed = seed
                    changed[position] = byte
                    variants.append(changed)
                }
                var inserted = seed
                inserted.insert(UInt8(ascii: ","), at: position)
                variants.append(inserted)
            }
            for variant in variants {
                checked += 1
                if let problem = agree(variant) { problems.append(problem) }
            }
        }
        return (fastAnswered, checked, problems)
    }

    @Test(arguments: [
        #"{}"#, #" { } "#, #"{"a":null}"#, #"{"a":[]}"#, #"{"a":{}}"#, #"{"a":[1,-2,0,true,false,null,"x",[],{}]}"#,
        #"{"a":"\"\\\/\b\f\n\r\t"}"#, #"{"a":"\u0041"}"#, #"{"a":"é"}"#, #"{"a":1.5}"#, #"{"a":1e3}"#, #"{"a":1E3}"#,
        #"{"a":1.0}"#, #"{"a":-0}"#, #"{"a":01}"#, #"{"a":-}"#, #"{"a":--1}"#, #"{"a":+1}"#,
        #"{"a":999999999999999999}"#, #"{"a":-999999999999999999}"#, #"{"a":9223372036854775807}"#,
        #"{"a":9223372036854775808}"#, #"{"a":1,"a":2}"#, #"{"a":1,}"#, #"{,}"#, #"{"a" 1}"#, #"{"a":tru}"#,
        #"{"a":truex}"#, #"{"a":nul}"#, #"{"a":1}x"#, #"{"a":1}{}"#, "{\"a\":\"\u{01}\"}", "{\"a\"\u{0C}:1}",
        "\u{FEFF}{}", "{\"a\":1}\n\t\r ", #"{"a":"x"#, #"{"a":1"#, #"{"a"#, #"{"#, #"{'a':1}"#, #"{a:1}"#,
        #"{"a":[1 2]}"#, #"{"a":[1,]}"#, #"{"a":"\x"}"#, #"{"a":"\"}"#, #"{"a":Infinity}"#, #"{"a":NaN}"#,
        #"[1,2]"#, #""x""#, #"5"#, #"null"#, "",
    ])
    func edgeCasesAgree(json: String) {
        if let problem = Self.agree(Array(json.utf8)) { Issue.record(Comment(rawValue: problem)) }
    }

    /// Nesting past the fast reader's depth goes to JSONDecoder, which answers the same as before.
    @Test func deepNestingIsLeftToJSONDecoder() throws {
        let depth = JSONFastReader.maxDepth + 5
        let json = Array(("{\"a\":" + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}").utf8)
        #expect(json.withUnsafeBufferPointer { JSONFastReader.read($0) } == nil)
        #expect(try JSONValue.parse(json) == JSONValue.parseWithFoundation(json))
    }

    /// What the device and the app send every call (308 `rtc`, 302 offer with its SDP) is read by
    /// the fast path, to the same value.
    @Test func callAndOfferMessagesTakeTheFastPath() throws {
        let call = CallMessage(event: .call, curId: "u1", targetId: "d1", sessionId: "s-1", timeout: 1_732_200_030_000,
                               extra: CallExtra(category: "sp_dpsxj"), appDeviceId: "phone")
        let offer = SignalMessage(header: SignalHeader(from: "u1", to: "d1", sessionId: "s-1"),
                                  body: .answer(SignalAnswer(sdp: "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\n")))
        for payload in [call.envelope(t: 1_732_200_000).encoded(),
                        Envelope(protocolNumber: .webrtcSignalling, t: 1, data: offer.envelopeData).encoded()] {
            let fast = payload.withUnsafeBufferPointer { JSONFastReader.read($0) }
            #expect(fast != nil)
            #expect(fast == (try JSONValue.parseWithFoundation(payload)))
        }
    }
}

@Suite("JSON writer")
struct JSONWriterTests {
    /// Escapes as before the byte-wise writer: quote, backslash, \n \r \t, other controls as \u00xx
    /// (lower-case hex), everything else as its UTF-8; and it reads back to the same value.
    @Test func stringsAreEscapedAndReadBack() throws {
        let text = "a\"b\\c\n\r\t\u{01}\u{1F}\u{7F}/é😀"
        let written = JSONValue.object(["k": .string(text), "n": .null, "b": .bool(false), "i": .int(-42)]).serialized()
        #expect(String(decoding: written, as: UTF8.self)
                == #"{"b":false,"i":-42,"k":"a\"b\\c\n\r\t\u0001\u001f"# + "\u{7F}/é😀\",\"n\":null}")
        #expect(try JSONValue.parse(written) == JSONValue.parseWithFoundation(written))
        #expect(try JSONValue.parse(written) == .object(["k": .string(text), "n": .null, "b": .bool(false), "i": .int(-42)]))
    }
}
