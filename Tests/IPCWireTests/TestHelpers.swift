@testable import IPCWire

/// Bytes of a string literal.
func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

/// Bytes from a hex string (test vectors computed with Python's cryptography/zlib/hmac).
func hex(_ s: String) -> [UInt8] {
    var out: [UInt8] = []
    var it = s.makeIterator()
    while let hi = it.next(), let lo = it.next() {
        out.append(UInt8(String([hi, lo]), radix: 16) ?? 0)
    }
    return out
}

/// Parses a JSON text into the `data` of an envelope, for decoder tests.
func dataOf(_ json: String) throws -> JSONValue {
    try Envelope.decode(bytes(json)).data
}
