// The handshake of the `fmp4Stream` data channel (PROTOCOL.md 7, steps 1-4), one sans-IO machine
// per role: text in, what to send and whether to stream out. No I/O, no clock.

/// The device's side: `codec` on open, `recv` on `start`, streaming after `complete`.
public struct FMP4DeviceHandshake: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        /// The channel is not open yet.
        case closed
        /// `codec` sent; waiting for the app's `start`.
        case awaitingStart
        /// `recv` sent; waiting for `complete`.
        case awaitingComplete
        /// Binary messages flow (initialisation segment first).
        case streaming
    }

    /// What the device does after an input.
    public struct Effect: Sendable, Hashable {
        /// Text to send on the channel, in order.
        public var send: [FMP4ControlMessage] = []
        /// Start streaming now (initialisation segment first).
        public var startStreaming = false
        /// A message refused (logged and counted; the state is unchanged).
        public var refusal: String?

        public init(send: [FMP4ControlMessage] = [], startStreaming: Bool = false, refusal: String? = nil) {
            self.send = send
            self.startStreaming = startStreaming
            self.refusal = refusal
        }
    }

    public private(set) var state: State = .closed

    public init() {}

    /// The channel opened: send `codec` (step 1).
    public mutating func channelOpened() -> Effect {
        guard state == .closed else { return Effect() }
        state = .awaitingStart
        return Effect(send: [.codecHEVC])
    }

    /// A text message from the app.
    public mutating func received(_ text: String) -> Effect {
        let message: FMP4ControlMessage
        do {
            message = try FMP4ControlMessage.decode(text)
        } catch {
            return Effect(refusal: "refused an fmp4Stream text message: \(error)")
        }
        switch (state, message) {
        case (.awaitingStart, .start(let format)):
            guard format == "fmp4" else {
                return Effect(refusal: "refused start with msg \"\(format)\": only \"fmp4\" is streamed")
            }
            state = .awaitingComplete
            return Effect(send: [.recv])
        case (.awaitingComplete, .complete):
            state = .streaming
            return Effect(startStreaming: true)
        default:
            return Effect(refusal: "refused '\(message.type)' in state \(state)")
        }
    }

    /// The channel closed (or the link ended): nothing more is sent.
    public mutating func channelClosed() { state = .closed }
}

/// The app's side: answers `codec` with `start`, `recv` with `complete`, then takes binary
/// messages. Records the text it saw, in order (tests check the handshake).
public struct FMP4AppHandshake: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        case awaitingCodec
        case awaitingRecv
        case receiving
    }

    public struct Effect: Sendable, Hashable {
        public var send: [FMP4ControlMessage] = []
        public var refusal: String?

        public init(send: [FMP4ControlMessage] = [], refusal: String? = nil) {
            self.send = send
            self.refusal = refusal
        }
    }

    public private(set) var state: State = .awaitingCodec
    /// The device's text messages as they came (decoded), in order.
    public private(set) var received: [FMP4ControlMessage] = []
    /// The codec the device announced (`hevc`).
    public private(set) var codec: String?

    public init() {}

    public mutating func received(_ text: String) -> Effect {
        let message: FMP4ControlMessage
        do {
            message = try FMP4ControlMessage.decode(text)
        } catch {
            return Effect(refusal: "refused an fmp4Stream text message: \(error)")
        }
        received.append(message)
        switch (state, message) {
        case (.awaitingCodec, .codec(let name)):
            codec = name
            state = .awaitingRecv
            return Effect(send: [.startFMP4])
        case (.awaitingRecv, .recv):
            state = .receiving
            return Effect(send: [.complete])
        default:
            return Effect(refusal: "refused '\(message.type)' in state \(state)")
        }
    }
}
