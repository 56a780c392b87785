import CallRuntime
import DeviceProfile
import IPCWire
import Synchronization
import WebRTCLink

/// Simulated device links (issue 23 "Seams"): no webrtcbin, no camera. A link answers at once
/// (a fixed SDP), "connects" `connectDelayMs` after `start()` on the injected scheduler (nil: it
/// never does, and the device's reaper closes it), and can be told to break (`lost`). Tests and
/// the simulator inject this factory; with a `SimulatedClock` a call's link costs no real time.
public final class SimulatedDeviceLinks: DeviceLinkFactory, Sendable {
    private let table: SimulatedLinkTable<SimulatedDeviceLink>

    /// - Parameters:
    ///   - connectDelayMs: per session, how long its link takes to come up (nil: never); the
    ///     simulator draws it from its seed.
    public init(clock: any EngineClock, scheduler: any TimerScheduling,
                connectDelayMs: @escaping @Sendable (_ sessionId: String) -> Int64?) {
        table = SimulatedLinkTable(clock: clock, scheduler: scheduler, connectDelayMs: connectDelayMs)
    }

    /// Every link comes up `connectDelayMs` after it starts (nil: never).
    public convenience init(clock: any EngineClock, scheduler: any TimerScheduling, connectDelayMs: Int64? = 100) {
        self.init(clock: clock, scheduler: scheduler, connectDelayMs: { _ in connectDelayMs })
    }

    public func makeLink(_ request: DeviceLinkRequest) throws -> any DeviceMediaLink {
        let link = SimulatedDeviceLink(request: request, clock: table.clock, scheduler: table.scheduler,
                                       connectDelayMs: table.connectDelay(sessionId: request.header.sessionId))
        table.remember(link, sessionId: request.header.sessionId)
        return link
    }

    public func prepareWhileRinging(profile: DeviceProfile) {}

    public var hasLiveViewRoom: Bool { true }

    /// The last link made for the session (open or closed).
    public func link(sessionId: String) -> SimulatedDeviceLink? { table.link(sessionId: sessionId) }

    /// Breaks the session's link as a failing network would (the device sees it lost). False: no
    /// open link for the session.
    @discardableResult
    public func breakLink(sessionId: String, why: String = "simulated network failure") -> Bool {
        link(sessionId: sessionId)?.breakLink(why: why) ?? false
    }
}

/// One simulated device link (see `SimulatedDeviceLinks`).
public final class SimulatedDeviceLink: DeviceMediaLink, Sendable {
    public let sessionId: String
    public let offerHeader: SignalHeader
    public let liveView: Bool
    public let openedAtMs: Int64
    public let signals: AsyncStream<P2PLinkSignal>
    private let continuation: AsyncStream<P2PLinkSignal>.Continuation
    private let scheduler: any TimerScheduling
    private let clock: any EngineClock
    private let connectDelayMs: Int64?
    private let state: Mutex<State>

    private struct State {
        var phase = Phase.made
        var stream: StreamType
        var speakerOn = true
        var connectTimer: TimerToken?
    }

    /// Where the link is in its life.
    public enum Phase: Sendable, Equatable {
        case made, started, up, lost, closed
    }

    init(request: DeviceLinkRequest, clock: any EngineClock, scheduler: any TimerScheduling, connectDelayMs: Int64?) {
        sessionId = request.header.sessionId
        offerHeader = request.header
        liveView = request.liveView
        openedAtMs = request.nowMs
        self.clock = clock
        self.scheduler = scheduler
        self.connectDelayMs = connectDelayMs
        (signals, continuation) = AsyncStream<P2PLinkSignal>.makeStream(bufferingPolicy: .unbounded)
        state = Mutex(State(stream: request.offer.streamType))
    }

    public var phase: Phase { state.withLock { $0.phase } }
    public var streamType: StreamType { state.withLock { $0.stream } }
    public var isSpeakerOn: Bool { state.withLock { $0.speakerOn } }

    public func start() throws {
        let started = state.withLock { state -> Bool in
            guard state.phase == .made else { return false }
            state.phase = .started
            return true
        }
        guard started else { throw WebRTCLinkError.wrongLifecycleStep("start() twice or after close") }
        continuation.yield(.answer(sdp: "v=0\r\ns=simulated\r\n"))
        guard let token = scheduler.scheduleConnect(afterMs: connectDelayMs, on: clock, { [weak self] in self?.connect() })
        else { return }
        state.withLock { $0.connectTimer = token }
    }

    private func connect() {
        let connects = state.withLock { state -> Bool in
            state.connectTimer = nil
            guard state.phase == .started else { return false }
            state.phase = .up
            return true
        }
        if connects { continuation.yield(.up) }
    }

    /// The network fails: the device is told the link is lost. False when it is not open.
    @discardableResult
    public func breakLink(why: String) -> Bool {
        let (breaks, timer) = state.withLock { state -> (Bool, TimerToken?) in
            guard state.phase == .started || state.phase == .up else { return (false, nil) }
            state.phase = .lost
            defer { state.connectTimer = nil }
            return (true, state.connectTimer)
        }
        if let timer { scheduler.cancel(timer) }
        if breaks { continuation.yield(.lost(why)) }
        return breaks
    }

    public func addRemoteCandidate(_ line: String, mLineIndex: Int) {}

    @discardableResult
    public func switchStream(to target: StreamType) throws -> Bool {
        state.withLock { state in
            guard state.phase != .closed, state.stream != target else { return false }
            state.stream = target
            return true
        }
    }

    public func setSpeaker(on: Bool) { state.withLock { $0.speakerOn = on } }

    public var stats: LinkStatistics { LinkStatistics() }

    public func snapshotJPEG() throws -> [UInt8] { [] }

    public func close() {
        let timer = state.withLock { state -> TimerToken? in
            state.phase = .closed
            defer { state.connectTimer = nil }
            return state.connectTimer
        }
        if let timer { scheduler.cancel(timer) }
        continuation.finish()
    }
}
