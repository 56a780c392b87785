/// PKCS#7 padding to the AES block size (16), as pv2.2 uses it (PROTOCOL.md 2.1).
enum PKCS7 {
    static let blockSize = 16

    /// Appends 1 to 16 bytes, each equal to the count appended.
    static func pad(_ bytes: some Collection<UInt8>) -> [UInt8] {
        let n = blockSize - bytes.count % blockSize
        var out = Array(bytes)
        out.append(contentsOf: repeatElement(UInt8(n), count: n))
        return out
    }

    /// Removes the padding, or returns nil if the last block does not end with valid padding.
    static func unpad(_ bytes: [UInt8]) -> [UInt8]? {
        guard let last = bytes.last, bytes.count % blockSize == 0 else { return nil }
        let n = Int(last)
        guard n >= 1, n <= blockSize, n <= bytes.count else { return nil }
        guard bytes.suffix(n).allSatisfy({ $0 == last }) else { return nil }
        return Array(bytes.dropLast(n))
    }
}
