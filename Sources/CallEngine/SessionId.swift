/// The characters of the random part of a device-made session id (PROTOCOL.md 3).
public let sessionIdAlphabet: [Character] = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")

/// PROTOCOL.md 3: a device-made session id is `devId` + 6 random characters of `[0-9A-Za-z]`.
/// The engine never calls this itself (it has no randomness); the glue does, with its generator,
/// and passes the id in with the press.
public func makeSessionId(devId: String, using generator: inout some RandomNumberGenerator) -> String {
    var id = devId
    for _ in 0..<6 {
        id.append(sessionIdAlphabet[Int(generator.next(upperBound: UInt64(sessionIdAlphabet.count)))])
    }
    return id
}
