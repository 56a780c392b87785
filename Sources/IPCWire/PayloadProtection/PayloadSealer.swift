import Foundation

/// The sending side of payload protection (PROTOCOL.md 2.1): turns envelope JSON into an MQTT
/// payload in the profile's mode and numbers each protected message with the next seq.
public struct PayloadSealer: Sendable {
    public let mode: SecurityMode
    /// This sender's `from` value: 1 for the device, 2 or more for an app.
    public let from: UInt32
    /// The seq the next sealed message carries.
    public private(set) var nextSeq: UInt32
    private let key: LocalKey?
    private var exhausted = false
    /// How pv2.2 writes `from`: big-endian by default (PROTOCOL.md 2.1); `.littleEndian` on Tuya's
    /// cloud, as the official device SDK writes it (PROTOCOL.md 9.4). Ignored by other modes.
    public var pv22FromByteOrder: PV22.FromByteOrder = .bigEndian

    /// - Parameters:
    ///   - localKey: the device's 16-character key; ignored (and not checked) in plain mode.
    ///   - startSeq: the first seq; see `initialSequence(unixSeconds:)`.
    public init(mode: SecurityMode, localKey: String, from: UInt32, startSeq: UInt32) throws(WireError) {
        guard from >= 1 else {
            throw .invalidValue(field: "from", value: "0", expected: "1 (device) or 2 and more (apps)")
        }
        self.mode = mode
        self.from = from
        self.nextSeq = startSeq
        self.key = mode == .plain ? nil : try LocalKey(localKey)
    }

    /// Starts the seq from the clock (`initialSequence`); `unixSeconds` is injectable for tests.
    public init(mode: SecurityMode, localKey: String, from: UInt32,
                unixSeconds: Int64 = Int64(Date().timeIntervalSince1970)) throws(WireError) {
        try self.init(mode: mode, localKey: localKey, from: from,
                      startSeq: Self.initialSequence(unixSeconds: unixSeconds))
    }

    /// PROTOCOL.md 2.1: a sender starts at (unix seconds - 1,700,000,000) x 10, so a restarted
    /// sender continues above what it sent before. Clamped to the UInt32 range.
    public static func initialSequence(unixSeconds: Int64) -> UInt32 {
        let (scaled, overflow) = (unixSeconds - 1_700_000_000).multipliedReportingOverflow(by: 10)
        if overflow { return unixSeconds > 0 ? .max : 0 }
        return UInt32(clamping: scaled)
    }

    /// Seals `json` (a serialised envelope) into one MQTT payload and advances the seq.
    /// Throws `payloadTooLarge` if the result would exceed 64 KiB (the receiver would refuse it).
    public mutating func seal(_ json: some Collection<UInt8>) throws(WireError) -> [UInt8] {
        try seal(json, nonce: nil)
    }

    /// As `seal(_:)`, with a fixed pv2.3 nonce. Only for test vectors; ignored by other modes.
    public mutating func seal(_ json: some Collection<UInt8>, nonce: [UInt8]?) throws(WireError) -> [UInt8] {
        let payload: [UInt8]
        switch mode {
        case .plain:
            payload = Array(json)
        case .pv22, .pv23:
            guard let key else { throw .invalidKey("no localKey") }
            guard !exhausted else { throw .sequenceExhausted(from: from) }
            let header = SealHeader(seq: nextSeq, from: from)
            if mode == .pv22 {
                payload = try PV22.seal(json, header: header, key: key, fromByteOrder: pv22FromByteOrder)
            } else if let nonce {
                payload = try PV23.seal(json, header: header, key: key, nonce: nonce)
            } else {
                payload = try PV23.seal(json, header: header, key: key)
            }
            guard payload.count <= maxPayloadBytes else {
                throw .payloadTooLarge(size: payload.count, limit: maxPayloadBytes)
            }
            if nextSeq == .max { exhausted = true } else { nextSeq += 1 }
            return payload
        }
        guard payload.count <= maxPayloadBytes else {
            throw .payloadTooLarge(size: payload.count, limit: maxPayloadBytes)
        }
        return payload
    }

    /// Serialises and seals an envelope.
    public mutating func seal(_ envelope: Envelope) throws(WireError) -> [UInt8] {
        try seal(envelope.encoded())
    }
}
