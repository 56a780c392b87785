import Testing
@testable import TuyaCloud

@Suite("Pairing URL")
struct PairingURLTests {
    @Test("the QR code text is the SDK demo's")
    func url() throws {
        let licence = try TuyaLicence(productKey: "p1abcdefgh", uuid: "uuid0123456789ab", authkey: "AUTHKEY0123456789abcdefghijklmno")
        #expect(PairingURL.url(for: licence) == "https://smartapp.tuya.com/s/p?p=p1abcdefgh&uuid=uuid0123456789ab&v=2.0")
    }
}
