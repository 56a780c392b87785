import CallRuntime
import Foundation
import Synchronization
import WebRTCLink

/// Simulated app links (issue 23 "Seams"): no webrtcbin. A link offers at once (a fixed SDP),
/// "connects" `connectDelayMs` after the device's answer on the injected scheduler (nil: never),
/// and can be told to break (`lost`). With a `SimulatedClock` a call's link costs no real time.
public final class SimulatedAppLinks: AppLinkFactory, Sendable {
    private let table: SimulatedLinkTable<SimulatedAppLink>

    /// - Parameter connectDelayMs: per session, how long after the answer its link comes up (nil:
    ///   never); the simulator draws it from its seed.
    public init(clock: any EngineClock, scheduler: any TimerScheduling,
                connectDelayMs: @escaping @Sendable (_ sessionId: String) -> Int64?) {
        table = SimulatedLinkTable(clock: clock, scheduler: scheduler, connectDelayMs: connectDelayMs)
    }

    /// Every link comes up `connectDelayMs` after the answer (nil: never).
    public convenience init(clock: any EngineClock, scheduler: any TimerScheduling, connectDelayMs: Int64? = 100) {
        self.init(clock: clock, scheduler: scheduler, connectDelayMs: { _ in connectDelayMs })
    }

    public func makeLink(_ request: AppLinkRequest) -> any AppMediaLink {
        let link = SimulatedAppLink(request: request, clock: table.clock, scheduler: table.scheduler,
                                    connectDelayMs: table.connectDelay(sessionId: request.sessionId))
        table.remember(link, sessionId: request.sessionId)
        return link
    }

    /// The last link made for the session (open or closed).
    public func link(sessionId: String) -> SimulatedAppLink? { table.link(sessionId: sessionId) }

    /// Breaks the session's link as a failing network would. False: no open link.
    @discardableResult
    public func breakLink(sessionId: String) -> Bool { link(sessionId: sessionId)?.breakLink() ?? false }
}

/// One simulated app link (see `SimulatedAppLinks`).
public final class SimulatedAppLink: AppMediaLink, Sendable {
    public let sessionId: String
    public let devId: String
    public let transactionId: String
    public let ice: AppICEConfiguration
    public let signals: AsyncStream<AppLinkSignal>
    private let continuation: AsyncStream<AppLinkSignal>.Continuation
    private let scheduler: any TimerScheduling
    private let clock: any EngineClock
    private let connectDelayMs: Int64?
    private let inner: Mutex<State>

    private struct State {
        var state = LinkState.new
        var started = false
        var steps = LinkTimeline()
        var answeredAt: Date?
        var connectTimer: TimerToken?
    }

    init(request: AppLinkRequest, clock: any EngineClock, scheduler: any TimerScheduling, connectDelayMs: Int64?) {
        sessionId = request.sessionId
        devId = request.devId
        // Made from the session, not drawn: a simulated run is the same every time.
        transactionId = "sim-\(request.sessionId)"
        ice = request.ice
        self.clock = clock
        self.scheduler = scheduler
        self.connectDelayMs = connectDelayMs
        (signals, continuation) = AsyncStream<AppLinkSignal>.makeStream(bufferingPolicy: .unbounded)
        var state = State(answeredAt: request.answeredAt)
        state.steps.opened = Self.date(clock.nowMs())
        state.steps.callAnswered = request.answeredAt
        inner = Mutex(state)
    }

    private static func date(_ ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000) }

    public func start() throws(WebRTCLinkError) {
        let now = Self.date(clock.nowMs())
        let first = inner.withLock { s -> Bool in
            guard !s.started, !s.state.isFinal else { return false }
            s.started = true
            s.state = .connecting
            s.steps.offerMade = now
            return true
        }
        guard first else { throw .wrongLifecycleStep("start() twice or after close") }
        continuation.yield(.offer(sdp: "v=0\r\ns=simulated\r\n"))
    }

    public func startInBackground(_ done: @escaping @Sendable (WebRTCLinkError?) -> Void) {
        do throws(WebRTCLinkError) {
            try start()
            done(nil)
        } catch {
            done(error)
        }
    }

    public func setRemoteAnswer(_ sdp: String) throws(WebRTCLinkError) {
        guard inner.withLock({ $0.started && !$0.state.isFinal }) else { throw .wrongLifecycleStep("no offer out") }
        guard let token = scheduler.scheduleConnect(afterMs: connectDelayMs, on: clock, { [weak self] in self?.connect() })
        else { return }
        inner.withLock { $0.connectTimer = token }
    }

    private func connect() {
        let now = Self.date(clock.nowMs())
        let connects = inner.withLock { s -> Bool in
            s.connectTimer = nil
            guard s.state == .connecting else { return false }
            s.state = .connected
            s.steps.connected = now
            return true
        }
        if connects { continuation.yield(.state(.connected)) }
    }

    /// The network fails: the app sees the link lost (ICE disconnected). False when it is not open.
    @discardableResult
    public func breakLink() -> Bool {
        let (breaks, timer) = inner.withLock { s -> (Bool, TimerToken?) in
            guard s.started, !s.state.isFinal else { return (false, nil) }
            s.state = .lost(.iceDisconnected)
            defer { s.connectTimer = nil }
            return (true, s.connectTimer)
        }
        if let timer { scheduler.cancel(timer) }
        if breaks { continuation.yield(.state(.lost(.iceDisconnected))) }
        return breaks
    }

    public func addRemoteCandidate(_ line: String, sdpMLineIndex: Int) {}

    public var state: LinkState { inner.withLock { $0.state } }

    public func offerSent() {
        let now = Self.date(clock.nowMs())
        inner.withLock { $0.steps.offerSent = now }
    }

    public func answerArrived() {
        let now = Self.date(clock.nowMs())
        inner.withLock { $0.steps.answerReceived = now }
    }

    public func callAnswered(at date: Date?) {
        inner.withLock {
            $0.answeredAt = date
            $0.steps.callAnswered = date
        }
    }

    public var answerArrivedAt: Date? { inner.withLock { $0.steps.answerReceived } }
    public var stats: VideoStats { VideoStats() }
    public var timeline: LinkTimeline { inner.withLock { $0.steps } }
    public var linkStats: LinkStatistics { LinkStatistics() }
    public var selectedCandidatePair: ICECandidatePair? { nil }
    public var hevcReport: AppHEVCReceiver.Report? { nil }

    public func close() {
        let timer = inner.withLock { s -> TimerToken? in
            if !s.state.isFinal { s.state = .closed }
            defer { s.connectTimer = nil }
            return s.connectTimer
        }
        if let timer { scheduler.cancel(timer) }
        continuation.finish()
    }
}
