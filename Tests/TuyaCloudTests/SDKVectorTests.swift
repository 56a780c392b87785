import IPCWire
import Testing
@testable import TuyaCloud

/// Vectors derived by reading the official device SDK (tuya/tuya-connect-kit-for-mqtt-embedded-c),
/// computed independently of this code with Python (hashlib, zlib, the `cryptography` package),
/// following the C step by step:
///
/// - `src/atop_service.c`, `atop_service_activate_request`: the activation JSON is `sprintf`'d
///   field by field, `"options": "{\"isFK\":false}"` (a space after that colon), `devAttribute`
///   = `1 << ATTRIBUTE_OTA` = 2048, `cadVer` 1.0.3, `cdVer` 1.0.0, `protocolVer` `PV_VERSION` 2.2,
///   `baselineVer` `BS_VERSION` 40.07 (`include/tuya_iot.h`).
/// - `src/atop_base.c`, `atop_base_request`: parameters a, [devId], et=1, t, [uuid], [v];
///   `atop_url_params_sign`: md5 over `"%s=%s||"` of each, then the key (`"%s"`), printed `%02x`;
///   `atop_request_data_encode`: PKCS#7 to 16, AES-128-ECB with the key's first 16 bytes, `data=`
///   and `%02X` per byte.
/// - `src/mqtt_service.c`, `tuya_mqtt_signature_tool`: password = `%02x` of md5(key)[4..11].
/// - `src/mqtt_service.c`, `pv22_packet_encode` on a little-endian host: "2.2", crc_32 (zlib's CRC-32,
///   `utils/crc32.c`) over seq|source|cipher, byte-swapped (big-endian); seq byte-swapped
///   (big-endian); source = 1 copied in host order (`01 00 00 00`); cipher = `aes128_ecb_encode`
///   (PKCS#7 + ECB).
///
/// The Python, in short (`ecb(k, d)` pads with PKCS#7 and encrypts with AES(k[:16]) in ECB):
/// ```
/// sign = md5("a=tuya.device.active||et=1||t=1732200000||uuid=<uuid>||v=4.4||" + authkey).hexdigest()
/// body = "data=" + ecb(authkey, json).hex().upper()
/// pwd  = md5(authkey).digest()[4:12].hex()
/// after = pack(">I", seq) + pack("<I", 1) + ecb(localKey, msg)
/// frame = b"2.2" + pack(">I", zlib.crc32(after)) + after
/// token = b"2.2" + pack(">I", crc) + pack(">I", 7) + pack("<I", 1) + ecb(authkey, token JSON)
/// answer = '{"result":"' + b64encode(ecb(authkey, answer JSON)) + '",...}'
/// ```
@Suite("SDK vectors")
struct SDKVectorTests {
    static let uuid = "tuya0123456789abcdef"
    static let authkey = "AbCdEfGhIjKlMnOpQrStUvWxYz012345"
    static let productKey = "abcdefgh12345678"
    static let token = "AYabc123"
    static let t: Int64 = 1_732_200_000
    static let devId = "6c0123456789abcdefgh"
    static let secKey = "0123456789abcdef"
    static let localKey = "fedcba9876543210"

    static func licence() throws -> TuyaLicence {
        try TuyaLicence(productKey: productKey, uuid: uuid, authkey: authkey)
    }

    static func activation() throws -> ActivationRequest {
        ActivationRequest(licence: try licence(), token: token, softwareVersion: "1.0.0", t: t)
    }

    @Test("activation JSON, byte for byte as atop_service_activate_request prints it")
    func activationJSON() throws {
        #expect(try Self.activation().json == "{\"token\":\"AYabc123\",\"softVer\":\"1.0.0\",\"productKey\":\"abcdefgh12345678\",\"protocolVer\":\"2.2\",\"baselineVer\":\"40.07\",\"options\": \"{\\\"isFK\\\":false}\",\"devAttribute\":2048,\"cadVer\":\"1.0.3\",\"cdVer\":\"1.0.0\",\"t\":1732200000}")
    }

    @Test("activation sign string, sign and query in atop_base_request's order")
    func activationSign() throws {
        let request = try Self.activation().request
        #expect(request.signInput == "a=tuya.device.active||et=1||t=1732200000||uuid=tuya0123456789abcdef||v=4.4||AbCdEfGhIjKlMnOpQrStUvWxYz012345")
        #expect(request.sign == "f67872dc91a720291b7fae4febd7d49b")
        #expect(request.query == "a=tuya.device.active&et=1&t=1732200000&uuid=tuya0123456789abcdef&v=4.4&sign=f67872dc91a720291b7fae4febd7d49b")
        #expect(request.pathAndQuery == "/d.json?a=tuya.device.active&et=1&t=1732200000&uuid=tuya0123456789abcdef&v=4.4&sign=f67872dc91a720291b7fae4febd7d49b")
    }

    @Test("activation body: data= and upper-case hex of AES-128-ECB(PKCS#7(JSON)) under authkey[0..15]")
    func activationBody() throws {
        let body = try Self.activation().request.body()
        #expect(String(decoding: body, as: UTF8.self) == "data=9FF0B2104DA71D8A85F3376FB5C87CB3353F9777E1B4652D3CE17582CDB5DDBB58DDE9F3418E295FB526D9A69276E9CFF316BB675206AE7D9D6D49F7FBAB201A7CD788D7D988844432951121CBA33BB490AF3BAA159F97ED63206671650C31AB02ADA216E79710BE3E576BA7E233587D0B23E993A1B2B3670B9EE87D50B5817B4D1074C68873FD587D474567E7638389531A4BA8D4A36C65D8EDB90D9250EF080AACA7FFC750084F2CDAF5B6333F759B397CCFCDAA717607A5B510E2EE3DFA2C1774636A394F85637D377E60CBD1F92A25268456FEDE98E315E31B20AAEFBE08")
    }

    @Test("headers of the API and of iotdns, in the SDK's order")
    func headers() {
        #expect(ATOPRequest.headers == [HTTPHeader(name: "User-Agent", value: "TUYA_IOT_SDK"),
                                        HTTPHeader(name: "Content-Type", value: "application/x-www-form-urlencoded;charset=UTF-8")])
        #expect(IotDNSRequest.headers == [HTTPHeader(name: "Content-Type", value: "application/x-www-form-urlencoded;charset=UTF-8")])
    }

    @Test("versions.update v4.1: devId in the query, the secKey signs and encrypts")
    func versionsUpdate() throws {
        let text = VersionsUpdate.versionsText(softwareVersion: "1.0.0")
        let request = VersionsUpdate.request(devId: Self.devId, secKey: Self.secKey, versionsText: text, t: Self.t)
        #expect(request.json == "{\"versions\":\"[{\\\"otaChannel\\\":0,\\\"protocolVer\\\":\\\"2.2\\\",\\\"baselineVer\\\":\\\"40.07\\\",\\\"softVer\\\":\\\"1.0.0\\\"}]\",\"t\":1732200000}")
        #expect(request.query == "a=tuya.device.versions.update&devId=6c0123456789abcdefgh&et=1&t=1732200000&v=4.1&sign=c2d429ca53c2180077b6e81a9f032e3f")
        #expect(String(decoding: try request.body(), as: UTF8.self) == "data=2A0E4A88C032BFFA0761C121BFC051A67FD87B8E9FD66B6211231132689E7139F416AB0C037807989830DA2341DFDA237A991C9058B3D2F00B208F90C83F004BB7BCDED293DBA9D9E8E4B88C66DF51286C159BD2B8DB32E02F901878CF58B635C5DAF3B1924911F27CAA74C7F67B8CBCF0C692E2EFE948DA76322ED9DA19D3BE")
    }

    @Test("MQTT passwords: hex of md5(key)[4..11]")
    func passwords() throws {
        let direct = MQTTCredentials.directLink(try Self.licence())
        #expect(direct.clientId == "acon_" + Self.uuid)
        #expect(direct.username == "acon_" + Self.uuid)
        #expect(direct.password == "fc018589d682836c")
        #expect(direct.subscriptions == ["d/ai/" + Self.uuid])
        #expect(direct.publishTopic == nil)
        #expect(direct.payloadKey == "AbCdEfGhIjKlMnOp")
        let device = MQTTCredentials.deviceLink(devId: Self.devId, secKey: Self.secKey, localKey: Self.localKey)
        #expect(device.clientId == Self.devId)
        #expect(device.username == Self.devId)
        #expect(device.password == "61035123906e58e0")
        #expect(device.subscriptions == ["smart/device/in/" + Self.devId, "rpc/rsp/" + Self.devId, "rpc/file/" + Self.devId])
        #expect(device.publishTopic == "smart/device/out/" + Self.devId)
    }

    @Test("pv2.2 as the SDK seals it: from = 1 in host (little-endian) order, crc and seq big-endian")
    func pv22Header() throws {
        let message = #"{"protocol":4,"t":1732200000,"data":{"devId":"6c0123456789abcdefgh","dps":{"1":true}}}"#
        let key = try LocalKey(Self.localKey)
        let frame = try PV22.seal(Array(message.utf8), header: SealHeader(seq: 0x1234, from: 1), key: key, fromByteOrder: .littleEndian)
        #expect(hex(frame.prefix(15)) == "322e32cf9326e50000123401000000")
        #expect(hex(frame) == "322e32cf9326e500001234010000006f80004538a7d597a0ce8bd49caadd0fe4b88eba5cdbe95526707ba0f3baeb0187c0550220ca0da96a0227b95a8037c83d5b9a08889a29085b9601426d53134eb4badf6a27106ffc38a93cb3a5c86d9b8e7ce1dafdf623cb20c0a8df8172887a")
        // Both orders open with `.eitherOrder`; big-endian-only reads the SDK's from as 0x01000000.
        let either = try PV22.open(frame, key: key, fromOrder: .eitherOrder)
        #expect(either.header == SealHeader(seq: 0x1234, from: 1))
        #expect(String(decoding: either.json, as: UTF8.self) == message)
        #expect(try PV22.open(frame, key: key).header.from == 0x0100_0000)
        let bigEndian = try PV22.seal(Array(message.utf8), header: SealHeader(seq: 0x1234, from: 1), key: key)
        #expect(try PV22.open(bigEndian, key: key, fromOrder: .eitherOrder).header.from == 1)
        // The sealer and opener carry the option.
        var sealer = try PayloadSealer(mode: .pv22, localKey: Self.localKey, from: 1, startSeq: 0x1234)
        sealer.pv22FromByteOrder = .littleEndian
        #expect(try sealer.seal(Array(message.utf8)) == frame)
        var opener = try PayloadOpener(mode: .pv22, localKey: Self.localKey)
        opener.pv22FromAcceptance = .eitherOrder
        #expect(try opener.open(frame).from == 1)
    }

    @Test("the token as the cloud seals it opens with authkey[0..15]")
    func tokenVector() throws {
        let frame = bytes(hex: "322e32e9124b130000000701000000f0aa0fb4f9620f3b27cd1f9bbcc488a6fa30ef5b44b2964a29eab4e701d30f23d322e4423c46f6f6d98e529b9b598ed938b712126a19366d1aa91dd2a6344f58d87238939fdadf486db042c4a58229c51fb2469d98f483bed5e90ebf7b30aa39")
        let token = try ActivationToken.decode(frame, authkey: Self.authkey)
        #expect(token == ActivationToken(token: "AYabc123", region: "EU", env: "pro"))
        // Our own sealing gives the same frame.
        #expect(try ActivationToken.seal(token, authkey: Self.authkey, t: Self.t, seq: 7) == frame)
    }

    @Test("an activation answer sealed as the cloud seals it reads into an ActivationResult")
    func activationAnswerVector() throws {
        let body = Array(#"{"result":"Eg6s8Ptb4gVhZetjlFEixRnQFjT0RqNK5zamHxU6dqBm1gmgitf4SgNYhO3XqxC0n4Q87zT5PgZMS2pWPqfkUl8KUuQFA1zU/gYUHxadZfs+dRza/oJdcL9pnBSkJ147odJiM+gYBKCQAM8x/zFvWoc4YFyrixBa6kyopGMZK1fK20w9L8itU1Z6M0pVuUv/lj+Kzkk3RLHqzGWaawinrJSuHprgn9XexPS/vKrU+lVU83wHWwsT7Jmd7qo97LuDPz/kUaHRhyKrLeSmYOCjMK1oXsM0pragKnyXy1nBDyXgLJ/HYjJmPi+eC5jEmXpe5NxJ8WPC7Qah7SLwECaoq6AbWyHJ7WCcnO2wM0BjvbELBJr7tOpZnvWaanBFuTNJCTTtUA+MZatR6lInlJXJBUXGL1MalTzuukILuvyZ2iAhffuRm6TMc7yselGzNwgesMhrTXLzGLiACIfPloddKKSygch8P434erLczttCyH4=","t":1732200001,"sign":"ignored"}"#.utf8)
        let answer = try ATOPAnswer.decode(body, key: Self.authkey, limit: ATOPRequest.activationAnswerLimit)
        #expect(answer.success)
        #expect(answer.wasEncrypted)
        #expect(answer.t == 1_732_200_001)
        let result = try ActivationResult.decode(answer)
        #expect(result.devId == Self.devId)
        #expect(result.secKey == Self.secKey)
        #expect(result.localKey == Self.localKey)
        #expect(result.schemaId == "000004abcd")
        #expect(result.stdTimeZone == "+01:00")
        #expect(result.dataPoints == [
            DPDefinition(id: 1, code: "switch", type: "bool", mode: "rw", property: #"{"type":"bool"}"#),
            DPDefinition(id: 154, code: "doorbell_pic", type: "raw", mode: "ro", property: nil),
        ])
        #expect(result.schemaProblem == nil)
    }
}

func hex(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}

func bytes(hex: String) -> [UInt8] {
    var out: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
        out.append(UInt8(hex[index..<next], radix: 16) ?? 0)
        index = next
    }
    return out
}
