/// A device's `localKey` (PROTOCOL.md 1): exactly 16 ASCII characters, used as their 16 bytes,
/// the AES-128 key of pv2.2 and pv2.3. The key itself never appears in an error or a description.
public struct LocalKey: Sendable, Equatable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init(_ string: String) throws(WireError) {
        let scalars = string.unicodeScalars
        guard scalars.allSatisfy(\.isASCII) else {
            throw .invalidKey("localKey must be 16 ASCII characters; it contains non-ASCII characters")
        }
        guard scalars.count == 16 else {
            throw .invalidKey("localKey must be exactly 16 ASCII characters, not \(scalars.count)")
        }
        self.bytes = Array(string.utf8)
    }

    public var description: String { "LocalKey(16 bytes, redacted)" }
}
