import IPCWire

/// An answer of the HTTPS ("atop") API, opened (PROTOCOL.md 9.3).
///
/// Follows `src/atop_base.c`: `atop_response_data_decode` looks for a top-level `result`, base64-
/// decodes it and decrypts it with the key's first 16 bytes (`atop_response_result_decrpyt`); the
/// plaintext is the real answer. When that fails (no `result`, not base64, not decryptable) the body
/// itself is read as the answer ("try parse the plaintext data"): that is how refusals arrive.
/// `atop_response_result_parse_cjson` then requires `success`; `true` hands on `result`, anything
/// else is a refusal with `errorCode` / `errorMsg`; `t` is read when present.
public struct ATOPAnswer: Sendable, Equatable {
    public var success: Bool
    /// The answer's `result` (an object for activation); nil when absent.
    public var result: JSONValue?
    public var t: Int64?
    public var errorCode: String?
    public var errorMsg: String?
    /// Whether the answer came encrypted (a real success always does; a refusal comes plain).
    public var wasEncrypted: Bool

    public init(success: Bool, result: JSONValue?, t: Int64?, errorCode: String?, errorMsg: String?, wasEncrypted: Bool) {
        self.success = success
        self.result = result
        self.t = t
        self.errorCode = errorCode
        self.errorMsg = errorMsg
        self.wasEncrypted = wasEncrypted
    }

    /// Opens `body` with `key` (the authkey or secKey the request was signed with).
    public static func decode(_ body: some Collection<UInt8>, key: String, limit: Int) throws(TuyaCloudError) -> ATOPAnswer {
        guard body.count <= limit else { throw .answerTooLarge(size: body.count, limit: limit) }
        let outer: JSONValue
        do {
            outer = try JSONValue.parse(body)
        } catch {
            throw .malformedAnswer("not JSON: \(error)")
        }
        guard case .object(let fields) = outer else { throw .malformedAnswer("not a JSON object") }
        var decryptProblem: TuyaCloudError?
        if case .string(let sealed)? = fields["result"] {
            if let cipher = TuyaCrypto.base64Decode(sealed) {
                do throws(TuyaCloudError) {
                    let plain = try TuyaCrypto.decryptECB(cipher, key: TuyaCrypto.aesKey(key, field: "key"))
                    let inner: JSONValue
                    do {
                        inner = try JSONValue.parse(plain)
                    } catch {
                        throw TuyaCloudError.wrongKey("the decrypted result is not JSON")
                    }
                    return try read(inner, encrypted: true)
                } catch {
                    decryptProblem = error
                }
            } else {
                decryptProblem = .badBase64(field: "result")
            }
        }
        do throws(TuyaCloudError) {
            let plain = try read(outer, encrypted: false)
            // A success whose result is the string that would not open: the opening is what failed.
            if let decryptProblem, plain.success, case .string? = plain.result { throw decryptProblem }
            return plain
        } catch {
            // A body with an undecryptable `result` and no `success`: the decryption is what failed.
            if let decryptProblem, case .missingField("success") = error { throw decryptProblem }
            throw error
        }
    }

    private static func read(_ value: JSONValue, encrypted: Bool) throws(TuyaCloudError) -> ATOPAnswer {
        guard case .object(let o) = value else { throw .malformedAnswer("the answer is not a JSON object") }
        guard let success = o["success"] else { throw .missingField("success") }
        var t: Int64?
        switch o["t"] {
        case .int(let i)?: t = i
        case .double(let d)?: t = JSONObjectReader.saturating(d)
        default: t = nil
        }
        if success == .bool(true) {
            return ATOPAnswer(success: true, result: o["result"], t: t, errorCode: nil, errorMsg: nil, wasEncrypted: encrypted)
        }
        func text(_ key: String) -> String? {
            switch o[key] {
            case .string(let s)?: s
            case .int(let i)?: String(i)
            default: nil
            }
        }
        return ATOPAnswer(success: false, result: nil, t: t, errorCode: text("errorCode"), errorMsg: text("errorMsg"), wasEncrypted: encrypted)
    }

    /// The refusal this answer is, or nil when it is a success.
    public var refusal: ATOPRefusal? {
        success ? nil : ATOPRefusal(errorCode: errorCode, errorMsg: errorMsg)
    }

    /// Seals an answer as the cloud does (the JSON encrypted and base64'd into `result`, beside `t`):
    /// for the stand-in and the tests.
    public static func sealed(plainAnswer json: String, key: String, t: Int64) throws(TuyaCloudError) -> [UInt8] {
        let cipher = try TuyaCrypto.encryptECB(Array(json.utf8), key: TuyaCrypto.aesKey(key, field: "key"))
        return Array(#"{"result":""#.utf8) + Array(TuyaCrypto.base64Encode(cipher).utf8) + Array(#"","t":\#(t)}"#.utf8)
    }
}
