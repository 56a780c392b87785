/// Everything that can be wrong with a message on the wire. Each case names what was wrong,
/// so a log line says which field of which message was refused (PROTOCOL.md 3.4).
public enum WireError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The MQTT payload is larger than `maxPayloadBytes` (PROTOCOL.md 1): refused unread.
    case payloadTooLarge(size: Int, limit: Int)
    /// The payload is not JSON text.
    case malformedJSON(String)
    /// A required field is absent (or JSON null). The associated value is its path.
    case missingField(String)
    /// A field is present with the wrong JSON type.
    case wrongType(field: String, expected: String)
    /// A field has the right type but a value outside what the protocol allows.
    case invalidValue(field: String, value: String, expected: String)
    /// `event` / `callEvent` names no event of PROTOCOL.md 3.
    case unknownEvent(String)
    /// `protocol` is a number this document does not define.
    case unknownProtocol(Int64)
    /// Payload protection (PROTOCOL.md 2.1).
    case headerTooShort(size: Int, needed: Int)
    case wrongVersionPrefix(String)
    case checksumMismatch
    case authenticationFailed
    case decryptionFailed(String)
    case replayed(from: UInt32, seq: UInt32, lastAccepted: UInt32)
    case invalidKey(String)
    /// pv2.2: the checksum matched (the bytes are as sent) but the plaintext has bad padding or is
    /// not JSON: the sender used another localKey. (pv2.3 reports a wrong key as `authenticationFailed`.)
    case wrongKey(String)
    /// The sending side could not encrypt (should not happen with a valid key).
    case sealingFailed(String)
    /// A sender used seq 4294967295; it must restart with a new start seq.
    case sequenceExhausted(from: UInt32)
    /// A protected message from a sender the replay state does not remember (first contact since
    /// the receiver started, or evicted) whose envelope `t` is too far from the receiver's clock:
    /// possibly a message recorded before a restart, replayed.
    case staleEnvelope(from: UInt32, t: Int64, now: Int64, windowSeconds: Int64)

    public var description: String {
        switch self {
        case .payloadTooLarge(let size, let limit): "payload of \(size) bytes exceeds the \(limit)-byte limit"
        case .malformedJSON(let why): "payload is not valid JSON: \(why)"
        case .missingField(let path): "missing required field '\(path)'"
        case .wrongType(let field, let expected): "field '\(field)' must be \(expected)"
        case .invalidValue(let field, let value, let expected): "field '\(field)' has value \(value); expected \(expected)"
        case .unknownEvent(let e): "unknown call event '\(e)'"
        case .unknownProtocol(let p): "unknown protocol number \(p)"
        case .headerTooShort(let size, let needed): "protected payload of \(size) bytes is shorter than its \(needed)-byte header"
        case .wrongVersionPrefix(let p): "protected payload starts with '\(p)', not the profile's version prefix"
        case .checksumMismatch: "CRC32 of the protected payload does not match"
        case .authenticationFailed: "AES-GCM tag does not verify (tampered payload or wrong key)"
        case .decryptionFailed(let why): "payload does not decrypt: \(why)"
        case .replayed(let from, let seq, let last): "replayed message: seq \(seq) from \(from) is not greater than \(last)"
        case .invalidKey(let why): "invalid key: \(why)"
        case .wrongKey(let why): "payload was sealed with another localKey: \(why)"
        case .sealingFailed(let why): "payload could not be sealed: \(why)"
        case .sequenceExhausted(let from): "sender \(from) has used every sequence number"
        case .staleEnvelope(let from, let t, let now, let window):
            "envelope time \(t) of a first message from sender \(from) is more than \(window) s from now (\(now)): possibly replayed"
        }
    }
}

/// PROTOCOL.md 1: an MQTT payload over 64 KiB is refused unread.
public let maxPayloadBytes = 64 * 1024
