/// What `PayloadOpener` hands back: the envelope JSON, and in protected modes who sent it.
public struct OpenedPayload: Sendable, Equatable {
    public var json: [UInt8]
    /// The sender's seq and `from`; nil in plain mode.
    public var header: SealHeader?

    public init(json: [UInt8], header: SealHeader?) {
        self.json = json
        self.header = header
    }

    public var from: UInt32? { header?.from }
    public var seq: UInt32? { header?.seq }
}

/// The receiving side of payload protection (PROTOCOL.md 2.1). Checks, in order: the 64 KiB limit
/// (before anything else), the frame (`PV22`/`PV23`), then replay (seq greater than the last
/// accepted for its `from`). Any refusal leaves the replay state as it was.
public struct PayloadOpener: Sendable {
    public let mode: SecurityMode
    private let key: LocalKey?
    public private(set) var replayGuard: ReplayGuard
    /// A protected message from a sender the replay state does not remember (its first since this
    /// receiver started, or after an eviction) is accepted only if its envelope `t` is within this
    /// many seconds of the receiver's clock **[ours]**: that bounds a replay after a restart (or
    /// after a flood of `from` values) to messages recorded in the last few minutes. Applied when
    /// the caller passes `nowSeconds`.
    public var freshnessWindowSeconds: Int64 = 300
    /// Which byte orders of the pv2.2 `from` field are accepted: big-endian only by default
    /// (PROTOCOL.md 2.1); `.eitherOrder` on Tuya's cloud (PROTOCOL.md 9.4). Ignored by other modes.
    public var pv22FromAcceptance: PV22.FromAcceptance = .bigEndianOnly

    /// - Parameters:
    ///   - localKey: the device's 16-character key; ignored (and not checked) in plain mode.
    ///   - replaySenders: how many `from` values the replay state remembers (`ReplayGuard`).
    public init(mode: SecurityMode, localKey: String, replaySenders: Int = ReplayGuard.defaultCapacity) throws(WireError) {
        self.mode = mode
        self.key = mode == .plain ? nil : try LocalKey(localKey)
        self.replayGuard = ReplayGuard(capacity: replaySenders)
    }

    /// Opens one MQTT payload. A refused payload throws and changes nothing.
    public mutating func open(_ payload: some Collection<UInt8>) throws(WireError) -> OpenedPayload {
        guard payload.count <= maxPayloadBytes else {
            throw .payloadTooLarge(size: payload.count, limit: maxPayloadBytes)
        }
        let opened: (header: SealHeader, json: [UInt8])
        switch mode {
        case .plain:
            return OpenedPayload(json: Array(payload), header: nil)
        case .pv22:
            guard let key else { throw .invalidKey("no localKey") }
            opened = try PV22.open(payload, key: key, fromOrder: pv22FromAcceptance)
        case .pv23:
            guard let key else { throw .invalidKey("no localKey") }
            opened = try PV23.open(payload, key: key)
        }
        try replayGuard.check(opened.header)
        replayGuard.accept(opened.header)
        return OpenedPayload(json: opened.json, header: opened.header)
    }

    /// Opens one MQTT payload and decodes its envelope. The replay state advances only when the
    /// envelope decodes too, so a payload that is refused for any reason leaves no trace.
    /// With `nowSeconds` (the receiver's clock), a protected message from a sender the replay
    /// state does not remember must be fresh (`freshnessWindowSeconds`).
    public mutating func openEnvelope(_ payload: some Collection<UInt8>, nowSeconds: Int64? = nil) throws(WireError) -> (envelope: Envelope, header: SealHeader?) {
        let before = replayGuard
        var trial = self
        let opened = try trial.open(payload)
        let envelope = try Envelope.decode(opened.json)
        if let header = opened.header, let now = nowSeconds, !before.knows(header.from) {
            let (skew, overflow) = envelope.t.subtractingReportingOverflow(now)
            if overflow || skew.magnitude > freshnessWindowSeconds.magnitude {
                throw .staleEnvelope(from: header.from, t: envelope.t, now: now, windowSeconds: freshnessWindowSeconds)
            }
        }
        self = trial
        return (envelope, opened.header)
    }

    /// Opens one MQTT payload and decodes it down to its typed message: what a device or app does
    /// with every payload on its in topic. The replay state advances only when all of it succeeds.
    public mutating func openMessage(_ payload: some Collection<UInt8>, nowSeconds: Int64? = nil) throws(WireError) -> (message: InboundMessage, envelope: Envelope, header: SealHeader?) {
        var trial = self
        let (envelope, header) = try trial.openEnvelope(payload, nowSeconds: nowSeconds)
        let message = try InboundMessage.decode(envelope)
        self = trial
        return (message, envelope, header)
    }
}
