import CloudLink
import Testing

@Suite("Pairing QR code and CONNACK codes")
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
}
