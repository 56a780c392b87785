@testable import CloudLink
import Testing

@Suite("Pairing QR code")
struct TerminalQRCodeTests {
    @Test("the pairing URL becomes a square QR code, two characters per module, with a quiet zone")
    func qrShape() throws {
        let url = "https://smartapp.tuya.com/s/p?p=pkipcemutest01&uuid=ipcemutest1&v=2.0"
        let rows = try #require(TerminalQRCode.rows(for: url, margin: 2))
        let modules = rows.count
        #expect(modules >= 21 + 4 && (modules - 4 - 21) % 4 == 0, "a QR symbol is 21 + 4k modules wide")
        for row in rows { #expect(row.count == 2 * modules) }
        #expect(rows.first == String(repeating: "\u{2588}", count: 2 * modules), "the quiet zone is light")
        #expect(TerminalQRCode.render(url: url).contains(url))
    }

    @Test("the console's SVG draws the same modules as the terminal (one libqrencode matrix), in a 4-module quiet zone")
    func svgMatchesTerminal() throws {
        let url = "https://smartapp.tuya.com/s/p?p=pkipcemutest01&uuid=ipcemutest1&v=2.0"
        let svg = try #require(QRCodeSVG.svg(for: url, margin: 4, pixelsPerModule: 5))
        let rows = try #require(TerminalQRCode.rows(for: url, margin: 4))
        let side = rows.count
        #expect(svg.hasPrefix("<svg ") && svg.contains(#"viewBox="0 0 \#(side) \#(side)""#) && svg.contains(#"width="\#(side * 5)""#))
        // The path's runs back to modules: "M x y h run v1 h-run z".
        let path = try #require(svg.range(of: #" d=""#).map { svg[$0.upperBound...].prefix { $0 != "\"" } })
        var fromSVG = Set<[Int]>()
        for run in path.split(separator: "M") {
            let numbers = run.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
            let (x, y, length) = (numbers[0], numbers[1], numbers[2])
            for dx in 0..<length { fromSVG.insert([x + dx, y]) }
        }
        var fromTerminal = Set<[Int]>()
        for (y, row) in rows.enumerated() {
            for (x, module) in stride(from: 0, to: row.count, by: 2).map({ Array(row)[$0] }).enumerated() where module == " " {
                fromTerminal.insert([x, y])
            }
        }
        #expect(!fromSVG.isEmpty && fromSVG == fromTerminal)
        #expect(fromSVG.allSatisfy { $0[0] >= 4 && $0[1] >= 4 && $0[0] < side - 4 && $0[1] < side - 4 }, "a dark module in the quiet zone")
        #expect(QRCodeSVG.svg(for: String(repeating: "x", count: 5000)) == nil, "more than a QR code holds")
    }
}

@Suite("CONNACK refusals as the runner reads them")
struct ConnackCodeTests {
    @Test("MQTTClient's refusal reasons map to their CONNACK codes; other failures to none")
    func codes() {
        let endpoint = ": 127.0.0.1:8883"
        #expect(CloudJoinRunner.connackCode(in: "broker refused the connection (Connection Refused: not authorised.)" + endpoint) == 5)
        #expect(CloudJoinRunner.connackCode(in: "broker refused the connection (Connection Refused: bad user name or password.)" + endpoint) == 4)
        #expect(CloudJoinRunner.connackCode(in: "broker refused the connection (Connection Refused: identifier rejected.)" + endpoint) == 2)
        #expect(CloudJoinRunner.connackCode(in: "TLS handshake failed" + endpoint) == nil)
        #expect(CloudJoinRunner.connackCode(in: "connection refused" + endpoint) == nil)
        #expect(CloudJoinRunner.connackCode(in: "broker refused the connection" + endpoint) == nil)
    }
}
