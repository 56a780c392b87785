import TuyaCloud

/// A licence file for `ipcemu fleet --cloud tuya` (issue 21 item 5): one device per line as
/// `uuid,authkey`, the pairs the Tuya IoT platform issues for a product. Blank lines and lines
/// starting with `#` are skipped; the first other line may be the header `uuid,authkey`. The
/// product key is the fleet's (`--product-key` or the profile's `cloud.productKey`).
public enum CloudFleetLicences {
    /// The platform issues 32-character authkeys (`include/tuya_iot.h`: `AUTHKEY_LEN` 32).
    public static let authkeyLength = 32
    /// More lines than this are refused: the file is read whole.
    public static let lineLimit = 100_000

    /// The licences of `text`, in file order. Refuses the first bad line, naming its number (from 1)
    /// and its field: a missing or extra field, an authkey that is not 32 characters, a uuid or
    /// authkey the SDK cannot print (`TuyaLicence`), a uuid already on an earlier line.
    public static func parse(_ text: String, productKey: String) throws(CloudFleetLicenceError) -> [TuyaLicence] {
        var licences: [TuyaLicence] = []
        var lineOfUUID: [String: Int] = [:]
        var sawContent = false
        var number = 0
        // "\r\n" is one Character in Swift: split on both line ends.
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            number += 1
            guard number <= lineLimit else { throw .tooManyLines(limit: lineLimit) }
            var line = Substring(raw)
            if line.hasSuffix("\r") { line = line.dropLast() }
            let trimmed = line.trimmingSpaces
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let fields = trimmed.split(separator: ",", omittingEmptySubsequences: false).map { String($0.trimmingSpaces) }
            if !sawContent {
                sawContent = true
                if fields.count == 2, fields[0].lowercased() == "uuid", fields[1].lowercased() == "authkey" { continue }
            }
            guard fields.count == 2 else {
                throw .badLine(line: number, field: fields.count < 2 ? "authkey" : "line",
                               why: fields.count < 2 ? "is missing (expected uuid,authkey)"
                                                     : "has \(fields.count) fields; expected uuid,authkey")
            }
            let uuid = fields[0], authkey = fields[1]
            guard !uuid.isEmpty else { throw .badLine(line: number, field: "uuid", why: "is empty") }
            guard authkey.utf8.count == authkeyLength else {
                throw .badLine(line: number, field: "authkey",
                               why: "has \(authkey.utf8.count) characters; the platform issues \(authkeyLength)")
            }
            if let earlier = lineOfUUID[uuid] {
                throw .badLine(line: number, field: "uuid", why: "\(uuid) is already on line \(earlier)")
            }
            let licence: TuyaLicence
            do {
                licence = try TuyaLicence(productKey: productKey, uuid: uuid, authkey: authkey)
            } catch {
                if case .invalidInput(let field, let why) = error, field != "productKey" {
                    throw .badLine(line: number, field: field, why: why)
                }
                throw .productKey("\(error)")
            }
            lineOfUUID[uuid] = number
            licences.append(licence)
        }
        guard !licences.isEmpty else { throw .empty }
        return licences
    }
}

/// Why a licence file was refused.
public enum CloudFleetLicenceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Line `line` (from 1): `field` (uuid, authkey, line) `why`.
    case badLine(line: Int, field: String, why: String)
    case productKey(String)
    case empty
    case tooManyLines(limit: Int)

    public var description: String {
        switch self {
        case .badLine(let line, let field, let why): "line \(line): \(field) \(why)"
        case .productKey(let why): "the product key: \(why)"
        case .empty: "no licence in the file (one uuid,authkey per line)"
        case .tooManyLines(let limit): "more than \(limit) lines"
        }
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var s = self
        while let first = s.first, first == " " || first == "\t" { s = s.dropFirst() }
        while let last = s.last, last == " " || last == "\t" { s = s.dropLast() }
        return s
    }
}
