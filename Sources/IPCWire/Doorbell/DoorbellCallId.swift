/// PROTOCOL.md 8.1: a doorbell call id (`edata`, the SDK's `messageId`) is 8 random lowercase hex
/// digits followed by the unix seconds, decimal (`617bdf7a1732200000`). The engines never call
/// this (they have no randomness); the glue does, with its generator, and passes the id in with
/// the press (`DoorbellPress.sessionId`). A clock before 1970 counts as 0.
public func makeDoorbellCallId(unixSeconds: Int64, using generator: inout some RandomNumberGenerator) -> String {
    let digits: [Character] = Array("0123456789abcdef")
    var id = ""
    for _ in 0..<8 {
        id.append(digits[Int(generator.next(upperBound: UInt64(digits.count)))])
    }
    id += String(max(0, unixSeconds))
    return id
}
