/// The API said no: `{"success":false,"errorCode":..,"errorMsg":..}` (PROTOCOL.md 9.3), with what
/// the user should do about it.
///
/// The SDK names one code (`src/atop_base.c`: `GATEWAY_NOT_EXISTS`, the device is gone from the
/// cloud). The others are matched by the words Tuya's codes are made of (`SING_VALIDATE_FALED`, with
/// Tuya's spelling, is what public material shows for a bad signature); the exact codes of a bad
/// token or an unknown product were not seen in the SDK, so those are matched by `TOKEN` and
/// `PRODUCT` in the code **[ours]**.
public struct ATOPRefusal: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        /// The sign did not verify: the key does not belong to this uuid (or devId).
        case signatureInvalid
        /// The pairing token is expired, used, or unknown.
        case tokenInvalid
        /// The product id is not known to the cloud.
        case productNotFound
        /// `GATEWAY_NOT_EXISTS`: the device (devId) no longer exists in the cloud.
        case deviceNotFound
        /// Anything else.
        case other
    }

    public var errorCode: String?
    public var errorMsg: String?

    public init(errorCode: String?, errorMsg: String?) {
        self.errorCode = errorCode
        self.errorMsg = errorMsg
    }

    public var kind: Kind {
        let code = (errorCode ?? "").uppercased()
        if code == "GATEWAY_NOT_EXISTS" || code == "DEVICE_NOT_EXISTS" { return .deviceNotFound }
        if code.contains("SIGN") || code.contains("SING_") { return .signatureInvalid }
        if code.contains("TOKEN") { return .tokenInvalid }
        if code.contains("PRODUCT") || code.contains("SCHEMA") { return .productNotFound }
        return .other
    }

    /// One line: what the cloud said and what to do.
    public var advice: String {
        switch kind {
        case .signatureInvalid:
            "the authkey does not match this uuid (the cloud refused the request's signature): use the uuid and authkey issued together as one licence"
        case .tokenInvalid:
            "the pairing token is expired or already used: scan the QR code again with the app"
        case .productNotFound:
            "the cloud does not know this product id: check productKey (the PID of the product on the Tuya IoT platform)"
        case .deviceNotFound:
            "the device no longer exists in the cloud (it was removed): pair it again"
        case .other:
            "check the uuid, authkey and productKey, and that the licence is for this product"
        }
    }

    public var description: String {
        "refused (" + (errorCode ?? "no errorCode") + (errorMsg.map { ": " + $0 } ?? "") + "): " + advice
    }
}
