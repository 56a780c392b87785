/// One request to the HTTPS ("atop") API (PROTOCOL.md 9.3).
///
/// Follows `src/atop_base.c`, `atop_base_request`: the query parameters in a fixed order (`a`,
/// `devId` if any, `et=1`, `t`, `uuid` if any, `v` if any), then `sign`
/// (`atop_url_params_encode`); the sign is the lower-case hex MD5 of every `k=v||` in that order
/// followed by the whole key string (`atop_url_params_sign`); the body is `data=` and the
/// upper-case hex of AES-128-ECB(PKCS#7(JSON)) under the key's first 16 bytes
/// (`atop_request_data_encode`). The body is not signed. The path is `/d.json` for every call the
/// SDK makes (`src/atop_service.c`). Headers: `User-Agent: TUYA_IOT_SDK`, then the form
/// Content-Type.
public struct ATOPRequest: Sendable, Equatable {
    /// The API name (`a`): `tuya.device.active`, `tuya.device.versions.update`...
    public var api: String
    /// The API version (`v`); nil leaves the parameter out (`atop.online.debug.log` does).
    public var version: String?
    /// Set before activation (the uuid's requests).
    public var uuid: String?
    /// Set after activation (the device's requests).
    public var devId: String?
    /// Unix seconds, printed with `%d`.
    public var t: Int64
    /// The plaintext JSON, exactly as encrypted.
    public var json: String
    /// The signing and encryption key: the authkey before activation, the secKey after.
    public var key: String
    public var path: String = "/d.json"

    public init(api: String, version: String?, uuid: String?, devId: String?, t: Int64, json: String, key: String) {
        self.api = api
        self.version = version
        self.uuid = uuid
        self.devId = devId
        self.t = t
        self.json = json
        self.key = key
    }

    /// The headers, in the SDK's order.
    public static let headers: [HTTPHeader] = [
        HTTPHeader(name: "User-Agent", value: "TUYA_IOT_SDK"),
        HTTPHeader(name: "Content-Type", value: "application/x-www-form-urlencoded;charset=UTF-8"),
    ]

    /// The query parameters before `sign`, in the SDK's order.
    public var parameters: [(key: String, value: String)] {
        var out: [(key: String, value: String)] = [("a", api)]
        if let devId { out.append(("devId", devId)) }
        out.append(("et", "1"))
        out.append(("t", String(t)))
        if let uuid { out.append(("uuid", uuid)) }
        if let version { out.append(("v", version)) }
        return out
    }

    /// What is hashed for `sign`: `a=..||et=1||t=..||uuid=..||v=..||<key>`.
    public var signInput: String {
        parameters.map { $0.key + "=" + $0.value + "||" }.joined() + key
    }

    /// Lower-case hex MD5 of `signInput`.
    public var sign: String {
        TuyaCrypto.lowerHex(TuyaCrypto.md5(Array(signInput.utf8)))
    }

    /// `a=..&et=1&t=..&uuid=..&v=..&sign=..`.
    public var query: String {
        parameters.map { $0.key + "=" + $0.value + "&" }.joined() + "sign=" + sign
    }

    /// `/d.json?` + `query`.
    public var pathAndQuery: String { path + "?" + query }

    /// `data=` + upper-case hex of AES-128-ECB(PKCS#7(json)) under key[0..15].
    public func body() throws(TuyaCloudError) -> [UInt8] {
        let cipher = try TuyaCrypto.encryptECB(Array(json.utf8), key: TuyaCrypto.aesKey(key, field: "key"))
        return Array(("data=" + TuyaCrypto.upperHex(cipher)).utf8)
    }

    /// The SDK's answer buffers: 8 KiB for activation (`ACTIVATE_BUFFER_LENGTH`), 1 KiB otherwise
    /// (`DEFAULT_RESPONSE_BUFFER_LEN`). Ours are larger [ours]: a product with many DPs has a larger
    /// schema than the SDK's buffers hold (a known limit of the SDK), and refusing a good answer
    /// helps no one; still bounded.
    public static let activationAnswerLimit = 64 * 1024
    public static let answerLimit = 16 * 1024

    /// The whole HTTPS request against `endpoints`.
    public func httpsRequest(id: UInt64, purpose: HTTPSRequest.Purpose, endpoints: CloudEndpoints) throws(TuyaCloudError) -> HTTPSRequest {
        HTTPSRequest(id: id, purpose: purpose, host: endpoints.atopHost, port: endpoints.atopPort, pathAndQuery: pathAndQuery,
                     headers: Self.headers, body: try body(), caDER: endpoints.caDER,
                     answerLimit: purpose == .activate ? Self.activationAnswerLimit : Self.answerLimit)
    }
}
