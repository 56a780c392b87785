import IPCWire
import Testing
@testable import TuyaCloud

@Suite("iotdns")
struct IotDNSTests {
    @Test("the request body: without a region, with one, and the empty stored region")
    func body() throws {
        #expect(try IotDNSRequest.body(region: nil, env: "pro")
            == #"{"config":[{"key":"httpsSelfUrl","need_ca":true},{"key":"mqttsSelfUrl","need_ca":true}],"env":"pro"}"#)
        #expect(try IotDNSRequest.body(region: "EU", env: "pro")
            == #"{"config":[{"key":"httpsSelfUrl","need_ca":true},{"key":"mqttsSelfUrl","need_ca":true}],"region":"EU","env":"pro"}"#)
        #expect(try IotDNSRequest.body(region: "", env: "pr_0")
            == #"{"config":[{"key":"httpsSelfUrl","need_ca":true},{"key":"mqttsSelfUrl","need_ca":true}],"region":"","env":"pr_0"}"#)
        #expect(throws: TuyaCloudError.self) { try IotDNSRequest.body(region: "E\"U", env: "pro") }
    }

    @Test("the request goes to the configured server, pinned to its CA")
    func request() throws {
        let server = IotDNSServer(host: "127.0.0.2", port: 8443, caDER: [1, 2, 3])
        let request = try IotDNSRequest.request(id: 9, server: server, region: nil, env: "pro")
        #expect(request.url == "https://127.0.0.2:8443/v2/url_config")
        #expect(request.caDER == [1, 2, 3])
        #expect(request.answerLimit == 6 * 1024)
        #expect(IotDNSServer.tuya.host == "h2.iot-dns.com")
    }

    static let ca = TuyaCrypto.base64Encode(Array(0..<200).map { UInt8($0) })

    @Test("an answer gives the API host and path, the MQTT host and port, and the CA")
    func answer() throws {
        let body = #"{"caArr":["\#(Self.ca)"],"httpsSelfUrl":{"addr":"https://a3.tuyaeu.com/d.json"},"mqttsSelfUrl":{"addr":"m2.tuyaeu.com:8883"}}"#
        let endpoints = try IotDNSAnswer.parse(Array(body.utf8))
        #expect(endpoints == CloudEndpoints(atopHost: "a3.tuyaeu.com", atopPort: 443, atopPath: "/d.json", mqttHost: "m2.tuyaeu.com",
                                            mqttPort: 8883, caDER: Array(0..<200).map { UInt8($0) }))
    }

    @Test("missing fields, garbage, oversized and unusable answers are typed errors", arguments: [
        (#"{"httpsSelfUrl":{"addr":"https://a/d.json"},"caArr":["AAAA"]}"#, TuyaCloudError.missingField("mqttsSelfUrl")),
        (#"{"mqttsSelfUrl":{"addr":"m:1"},"caArr":["AAAA"]}"#, .missingField("httpsSelfUrl")),
        (#"{"httpsSelfUrl":{},"mqttsSelfUrl":{"addr":"m:1"},"caArr":["AAAA"]}"#, .missingField("httpsSelfUrl.addr")),
        (#"{"httpsSelfUrl":{"addr":"https://a/d.json"},"mqttsSelfUrl":{"addr":"m:1"}}"#, .missingField("caArr")),
        (#"{"httpsSelfUrl":{"addr":"https://a/d.json"},"mqttsSelfUrl":{"addr":"m:1"},"caArr":[]}"#, .missingField("caArr[0]")),
        (#"{"httpsSelfUrl":{"addr":"https://a/d.json"},"mqttsSelfUrl":{"addr":"m:1"},"caArr":["%%%"]}"#, .badBase64(field: "caArr[0]")),
        (#"{"httpsSelfUrl":{"addr":"https://a/d.json"},"mqttsSelfUrl":{"addr":"m"},"caArr":["AAAA"]}"#,
         .invalidValue(field: "mqttsSelfUrl.addr", why: "no port 1-65535 in 'm'")),
        (#"{"httpsSelfUrl":{"addr":"http://a/d.json"},"mqttsSelfUrl":{"addr":"m:1"},"caArr":["AAAA"]}"#,
         .invalidValue(field: "httpsSelfUrl.addr", why: "'http://a/d.json' does not start with https://")),
        (#"[1,2]"#, .malformedAnswer("iotdns answer is not a JSON object")),
    ])
    func refusals(body: String, expected: TuyaCloudError) {
        #expect(throws: expected) { try IotDNSAnswer.parse(Array(body.utf8)) }
    }

    @Test("garbage and oversized answers")
    func garbage() {
        #expect { try IotDNSAnswer.parse(Array("<html>502 Bad Gateway</html>".utf8)) } throws: { error in
            if case TuyaCloudError.malformedAnswer = error { return true }
            return false
        }
        let big = [UInt8](repeating: 0x20, count: 6 * 1024 + 1)
        #expect(throws: TuyaCloudError.answerTooLarge(size: 6 * 1024 + 1, limit: 6 * 1024)) { try IotDNSAnswer.parse(big) }
    }
}

@Suite("Licence and token")
struct TokenTests {
    static let authkey = SDKVectorTests.authkey

    @Test("licence values that cannot go on the wire unescaped are refused")
    func licence() {
        #expect(throws: TuyaCloudError.self) { try TuyaLicence(productKey: "p", uuid: "u/x", authkey: Self.authkey) }
        #expect(throws: TuyaCloudError.self) { try TuyaLicence(productKey: "p&", uuid: "u", authkey: Self.authkey) }
        #expect(throws: TuyaCloudError.self) { try TuyaLicence(productKey: "p", uuid: "u", authkey: "short") }
        #expect(throws: TuyaCloudError.self) { try TuyaLicence(productKey: "", uuid: "u", authkey: Self.authkey) }
        #expect(throws: TuyaCloudError.self) { try TuyaLicence(productKey: "p", uuid: String(repeating: "u", count: 26), authkey: Self.authkey) }
    }

    @Test("a token in either byte order of from, with or without env")
    func roundTrip() throws {
        for order in [PV22.FromByteOrder.littleEndian, .bigEndian] {
            let token = ActivationToken(token: "EUab12cd", region: "EU", env: "pr_0")
            let frame = try ActivationToken.seal(token, authkey: Self.authkey, t: 5, fromByteOrder: order)
            #expect(try ActivationToken.decode(frame, authkey: Self.authkey) == token)
        }
        let key = try LocalKey(String(Self.authkey.prefix(16)))
        let noEnv = try PV22.seal(Array(#"{"protocol":46,"t":1,"data":{"token":"abc","region":"AY"}}"#.utf8),
                                  header: SealHeader(seq: 1, from: 1), key: key)
        #expect(try ActivationToken.decode(noEnv, authkey: Self.authkey) == ActivationToken(token: "abc", region: "AY", env: "pro"))
    }

    @Test("a token under another key, not pv2.2, another protocol, missing fields")
    func refusals() throws {
        let token = ActivationToken(token: "abc", region: "EU", env: "pro")
        let otherKey = try ActivationToken.seal(token, authkey: "ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ", t: 1)
        #expect(throws: TuyaCloudError.wrongKey("the pairing message does not open with authkey[0..15]")) {
            try ActivationToken.decode(otherKey, authkey: Self.authkey)
        }
        #expect { try ActivationToken.decode(Array(#"{"protocol":46}"#.utf8), authkey: Self.authkey) } throws: { error in
            if case TuyaCloudError.notPV22 = error { return true }
            return false
        }
        let key = try LocalKey(String(Self.authkey.prefix(16)))
        func sealed(_ json: String) throws -> [UInt8] {
            try PV22.seal(Array(json.utf8), header: SealHeader(seq: 1, from: 1), key: key)
        }
        #expect(throws: TuyaCloudError.notTokenMessage(protocol: 4)) {
            try ActivationToken.decode(try sealed(#"{"protocol":4,"t":1,"data":{}}"#), authkey: Self.authkey)
        }
        #expect(throws: TuyaCloudError.missingField("data.region")) {
            try ActivationToken.decode(try sealed(#"{"protocol":46,"t":1,"data":{"token":"abc"}}"#), authkey: Self.authkey)
        }
        #expect(throws: TuyaCloudError.missingField("t")) {
            try ActivationToken.decode(try sealed(#"{"protocol":46,"data":{"token":"abc","region":"EU"}}"#), authkey: Self.authkey)
        }
        #expect(throws: TuyaCloudError.invalidValue(field: "data.token", why: "has 9 characters; the SDK takes at most 8")) {
            try ActivationToken.decode(try sealed(#"{"protocol":46,"t":1,"data":{"token":"123456789","region":"EU"}}"#), authkey: Self.authkey)
        }
    }
}

@Suite("ATOP answers")
struct ATOPAnswerTests {
    static let key = SDKVectorTests.authkey

    @Test("a plain refusal is typed, with advice for the SDK's and Tuya's known codes", arguments: [
        ("SING_VALIDATE_FALED", ATOPRefusal.Kind.signatureInvalid, "the authkey does not match this uuid"),
        ("GATEWAY_NOT_EXISTS", .deviceNotFound, "no longer exists in the cloud"),
        ("TOKEN_EXPIRED", .tokenInvalid, "scan the QR code again"),
        ("PRODUCT_NOT_EXISTS", .productNotFound, "does not know this product id"),
        ("SOMETHING_ELSE", .other, "check the uuid, authkey and productKey"),
    ])
    func refusal(code: String, kind: ATOPRefusal.Kind, advice: String) throws {
        let body = #"{"success":false,"errorCode":"\#(code)","errorMsg":"why","status":"error","t":1583208740059}"#
        let answer = try ATOPAnswer.decode(Array(body.utf8), key: Self.key, limit: 1024)
        #expect(!answer.success)
        #expect(!answer.wasEncrypted)
        let refusal = try #require(answer.refusal)
        #expect(refusal.errorCode == code)
        #expect(refusal.errorMsg == "why")
        #expect(refusal.kind == kind)
        #expect(refusal.advice.contains(advice))
        #expect(throws: TuyaCloudError.refused(refusal)) { try ActivationResult.decode(answer) }
    }

    @Test("a result under another key, garbage, oversized, no success")
    func unusable() throws {
        let other = try ATOPAnswer.sealed(plainAnswer: #"{"success":true,"result":{}}"#, key: "ZZZZZZZZZZZZZZZZ", t: 1)
        #expect { try ATOPAnswer.decode(other, key: Self.key, limit: 4096) } throws: { error in
            if case TuyaCloudError.wrongKey = error { return true }
            return false
        }
        #expect { try ATOPAnswer.decode(Array("<html>".utf8), key: Self.key, limit: 4096) } throws: { error in
            if case TuyaCloudError.malformedAnswer = error { return true }
            return false
        }
        #expect(throws: TuyaCloudError.answerTooLarge(size: 5000, limit: 4096)) {
            try ATOPAnswer.decode([UInt8](repeating: 0x20, count: 5000), key: Self.key, limit: 4096)
        }
        #expect(throws: TuyaCloudError.missingField("success")) {
            try ATOPAnswer.decode(Array(#"{"t":1}"#.utf8), key: Self.key, limit: 4096)
        }
    }

    @Test("an activation result lacking a field the SDK requires, or with a short key")
    func activationFields() throws {
        func result(_ json: String) throws -> ActivationResult {
            let body = try ATOPAnswer.sealed(plainAnswer: #"{"success":true,"t":1,"result":\#(json)}"#, key: Self.key, t: 1)
            return try ActivationResult.decode(ATOPAnswer.decode(body, key: Self.key, limit: 65536))
        }
        let full = #""devId":"d1","secKey":"0123456789abcdef","localKey":"0123456789abcdef","schemaId":"s","schema":"[]","stdTimeZone":"+08:00""#
        #expect(try result("{\(full)}").devId == "d1")
        #expect(throws: TuyaCloudError.missingField("result.stdTimeZone")) {
            try result(#"{"devId":"d1","secKey":"0123456789abcdef","localKey":"0123456789abcdef","schemaId":"s","schema":"[]"}"#)
        }
        #expect(throws: TuyaCloudError.missingField("result.schema")) {
            try result(#"{"devId":"d1","secKey":"0123456789abcdef","localKey":"0123456789abcdef","schemaId":"s","stdTimeZone":"+08:00"}"#)
        }
        #expect(throws: TuyaCloudError.invalidValue(field: "result.localKey", why: "must be 16 ASCII characters, has 3 bytes")) {
            try result(#"{"devId":"d1","secKey":"0123456789abcdef","localKey":"abc","schemaId":"s","schema":"[]","stdTimeZone":"+08:00"}"#)
        }
        // A schema that does not parse does not fail the activation (the SDK never reads it).
        let odd = try result(#"{"devId":"d1","secKey":"0123456789abcdef","localKey":"0123456789abcdef","schemaId":"s","schema":"nope","stdTimeZone":"+08:00","resetFactory":true}"#)
        #expect(odd.dataPoints.isEmpty)
        #expect(odd.schemaProblem != nil)
        #expect(odd.resetFactory)
    }

    @Test("skill.update and info.sync are signed with the secKey, devId in the query")
    func otherRequests() throws {
        let skill = SkillUpdate.request(devId: "d1", secKey: "0123456789abcdef", skill: #"{"webrtc":3}"#, t: 7)
        #expect(skill.json == #"{"devId":"d1","skill":"{\"webrtc\":3}","t":7}"#)
        #expect(skill.query.hasPrefix("a=tuya.device.skill.update&devId=d1&et=1&t=7&v=1.0&sign="))
        let sync = InfoSync.request(devId: "d1", secKey: "0123456789abcdef", t: 7)
        #expect(sync.json == #"{"t":7}"#)
        #expect(sync.query.hasPrefix("a=tuya.device.info.sync&devId=d1&et=1&t=7&v=1.0&sign="))
        let withSkill = ActivationRequest(licence: try TuyaLicence(productKey: "p", uuid: "u", authkey: SDKVectorTests.authkey),
                                          token: "t", softwareVersion: "1", t: 2, previousDevId: "old", skill: #"{"a":1}"#)
        #expect(withSkill.json.contains(#","devId":"old","skillParam":"{\"a\":1}","devAttribute":2048,"#))
    }
}

@Suite("API calls over MQTT")
struct RPCTests {
    @Test("the upgrade check is the SDK's text; a none answer offers nothing")
    func upgradeCheck() throws {
        let request = RPCRequest.upgradeCheck(id: 1, t: 1_732_200_000)
        #expect(request.text == #"{"id":1,"a":"tuya.device.upgrade.silent.get","t":1732200000,"data":{"subId":null,"t":1732200000},"v":"4.4"}"#)
        #expect(RPCRequest.reset(id: 2, t: 3).text == #"{"id":2,"a":"tuya.device.reset","t":3,"data":{"t":3},"v":"4.0"}"#)
        for result in ["null", "{}", #""none""#] {
            let answer = try RPCAnswer.decode(Array(RPCAnswer.text(id: 1, success: true, resultJSON: result, t: 9).utf8))
            #expect(answer.id == 1)
            #expect(answer.success)
            #expect(answer.offersNoUpgrade)
            #expect(answer.t == 9)
        }
        let offer = try RPCAnswer.decode(Array(RPCAnswer.text(id: 1, success: true, resultJSON: #"{"url":"x","version":"2"}"#, t: 9).utf8))
        #expect(!offer.offersNoUpgrade)
        #expect(throws: TuyaCloudError.missingField("data")) { try RPCAnswer.decode(Array(#"{"id":1}"#.utf8)) }
        #expect(throws: TuyaCloudError.wrongType(field: "id", expected: "a number")) { try RPCAnswer.decode(Array(#"{"id":"1","data":{}}"#.utf8)) }
    }
}
