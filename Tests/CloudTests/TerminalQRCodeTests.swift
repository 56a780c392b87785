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
