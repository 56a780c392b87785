import Foundation
import IPCWire
import Testing
@testable import CallRuntime

/// Fields from the wire cannot forge log lines (issue 10, hostile peers): one `log` call is one line,
/// in both formats, whatever the ids and reasons carry.
@Suite("Event log: wire text cannot forge lines")
struct EventLogEscapingTests {
    private let fixed = Date(timeIntervalSince1970: 1_732_200_000)

    private func line(_ format: LogFormat, message: String, device: String? = "dev1", fields: [(String, String)]) -> String {
        EventLogHandler(format: format, clock: { [fixed] in fixed }).render(.warning, message, device: device, fields: fields)
    }

    static let forgeries = [
        "s1\n2024-11-21T00:00:00.000Z ERROR [dev1] forged line",
        "s1\r2024-11-21T00:00:00.000Z ERROR forged",
        "s1\u{1b}[2K\u{1b}[1Gcleared", "a\u{0}b", "\u{2028}next", "\u{85}next", "tab\there", "del\u{7f}",
        "x\" level=error user=\"root", "back\\slash\\n",
    ]

    @Test("human format: no control character reaches the line; values parse back to what was sent",
          arguments: forgeries)
    func human(_ evil: String) throws {
        let text = line(.human, message: "refused call session=\(evil)", device: evil, fields: [("session", evil), ("from", evil)])
        #expect(!text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || (0x80...0x9F).contains($0.value) || $0.value == 0x2028 })
        // The fields (after a plain message) read back as exactly two, each the escaped value.
        let plain = line(.human, message: "refused", device: "dev1", fields: [("session", evil), ("from", evil)])
        let fields = try #require(Self.fields(after: "refused ", in: plain))
        #expect(fields.map(\.0) == ["session", "from"], "\(plain)")
        #expect(fields.map(\.1) == [EventLogHandler.escaped(evil), EventLogHandler.escaped(evil)])
    }

    /// Reads `k=v k="quoted \" value"` back (a log reader's view of the human format).
    static func fields(after marker: String, in line: String) -> [(String, String)]? {
        guard let start = line.range(of: marker)?.upperBound else { return nil }
        var rest = Substring(line[start...])
        var out: [(String, String)] = []
        while !rest.isEmpty {
            guard let eq = rest.firstIndex(of: "=") else { return nil }
            let key = String(rest[..<eq])
            rest = rest[rest.index(after: eq)...]
            var value = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                while let c = rest.first, c != "\"" {
                    if c == "\\", let next = rest.dropFirst().first {
                        // `\"` is a quote; any other escape stays as written (escaped text).
                        if next == "\"" { value.append("\"") } else { value.append(c); value.append(next) }
                        rest = rest.dropFirst(2)
                        continue
                    }
                    value.append(c); rest = rest.dropFirst()
                }
                guard rest.first == "\"" else { return nil }
                rest = rest.dropFirst()
            } else {
                let end = rest.firstIndex(of: " ") ?? rest.endIndex
                value = String(rest[..<end]); rest = rest[end...]
            }
            out.append((key, value))
            if rest.first == " " { rest = rest.dropFirst() }
        }
        return out
    }

    @Test("human format: plain values stay bare, others are quoted and round-trip")
    func humanQuoting() {
        #expect(line(.human, message: "m", fields: [("k", "plain")]).hasSuffix(" k=plain"))
        #expect(line(.human, message: "m", fields: [("k", "")]).hasSuffix(#" k="""#))
        #expect(line(.human, message: "m", fields: [("k", "two words")]).hasSuffix(#" k="two words""#))
        #expect(line(.human, message: "m", fields: [("k", #"a"b"#)]).hasSuffix(#" k="a\"b""#))
        #expect(line(.human, message: "a\nb", fields: []).hasSuffix(#" a\nb"#))
        #expect(EventLogHandler.escaped("\u{1b}") == #"\u{1b}"#)
    }

    @Test("JSON format: one line that parses back to exactly the text sent", arguments: forgeries)
    func json(_ evil: String) throws {
        let text = line(.json, message: evil, device: evil, fields: [("session", evil)])
        #expect(!text.contains("\n") && !text.contains("\r"))
        let parsed = try JSONValue.parse(Array(text.utf8))
        guard case .object(let o) = parsed else { Issue.record("not an object: \(text)"); return }
        #expect(o["msg"] == .string(evil) && o["session"] == .string(evil) && o["device"] == .string(evil))
    }
}
