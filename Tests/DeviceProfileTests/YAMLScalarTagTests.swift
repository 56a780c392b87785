import Testing
import Yams
@testable import DeviceProfile

/// The profile parser resolves plain scalars without Yams' regular expressions (no ICU in a fleet
/// worker: docs/fleet.md "Memory per device"). Its answers must be Yams' default resolver's.
@Suite("Plain scalars resolve as Yams' default resolver does, without regular expressions")
struct YAMLScalarTagTests {
    static let corpus = [
        "", "~", "null", "Null", "NULL", "nULL", "true", "True", "TRUE", "tRUE", "yes", "No", "on", "OFF", "y", "n",
        "0", "00", "07", "08", "0o7", "0o8", "0b101", "0b2", "0x1F", "0xg", "+0", "-0", "+12", "-1_000", "1_000",
        "12a", "1:20", "1:60", "1:5:07", "190:20:30", "0:20", "1:2:", "1.5", "-1.5", "1.", ".5", "._", "1e5", "1.5e-3",
        "1e", ".5e3", ".5e+3", "-.inf", "+.Inf", ".INF", ".nan", ".NaN", "-.nan", "1:20.5", "1:20.", "190:20:30.15",
        "<<", "=", "==", "2001-12-14", "2001-1-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5",
        "2001-12-15T02:59:43.1Z", "2001-12-14 21:59:43.10 Z", "2002-12-14 21:59:43.10 ", "2001-12-14T1:59:43",
        "2001-12-14T21:59", "12:30:45", "abc", "on off", "0x", "0b", "-", "+", ".", "1__", "_1", "1.2.3",
    ]

    @Test("The hand-written cases")
    func corpusMatchesYams() {
        for text in Self.corpus {
            #expect(YAMLScalarTags.resolve(text) == Resolver.default.resolveTag(of: Node(text)), "\(text)")
        }
    }

    @Test("20,000 generated scalars of digits, signs, separators and letters")
    func generatedMatchYams() {
        let alphabet = Array("0123456789_:.-+eExXbBoO TtZnaifNAIF")
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: seed >> 33)
        }
        var mismatches: [String] = []
        for _ in 0..<20_000 {
            let length = next() % 12
            let text = String((0..<length).map { _ in alphabet[next() % alphabet.count] })
            if YAMLScalarTags.resolve(text) != Resolver.default.resolveTag(of: Node(text)) { mismatches.append(text) }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(20))")
    }

    @Test("Quoted and explicitly tagged scalars keep their tag")
    func taggedScalars() throws {
        let yaml = """
            a: 12
            b: "12"
            c: !!str 12
            d: ! 12
            e: !!int "12"
            f: 1.5
            g: yes
            h: ~
            """
        guard case .mapping(let mapping)? = try Yams.compose(yaml: yaml, .basic) else {
            Issue.record("not a mapping")
            return
        }
        var tags: [String: Yams.Tag.Name] = [:]
        for (key, value) in mapping { tags[key.string ?? ""] = value.tagName }
        #expect(tags == ["a": .int, "b": .str, "c": .str, "d": .str, "e": .int, "f": .float, "g": .bool, "h": .null])
    }
}
