import CallEngine

/// What an engine host can run: either role of the call engine (both take the same `CallInput`s).
public protocol HostedCallEngine: Sendable {
    mutating func handle(_ input: CallInput, now: Int64) -> [CallEffect]
    mutating func perform(_ action: LocalAction, now: Int64) throws(CallActionError) -> [CallEffect]
}

extension DeviceCallEngine: HostedCallEngine {}
extension AppCallEngine: HostedCallEngine {}
extension DoorbellCallEngine: HostedCallEngine {}
extension AppDoorbellEngine: HostedCallEngine {}
extension DeviceSideEngine: HostedCallEngine {}

/// The glue every host of a call engine shares, written once (issue 9, DESIGN.md "Scale"): the
/// engine, the clock it is fed from, and its armed timers on a shared `TimerScheduling` (the real
/// `TimerScheduler`: one heap and one thread for every engine that shares it, never a `Task` per
/// armed timer; or a `SimulatedClock`, whose timers fire when it advances). `Device`, `AppUser`
/// (and through it the console phone) keep one inside their actor.
///
/// Every input goes through `handle`/`perform`: the host feeds the engine with the clock's time,
/// carries out the timer effects itself, and returns the other effects, in order, for the owner
/// to carry out (sends, ringing, links, records: what differs between a device and an app).
/// A due timer calls `fire`: the owner hops back onto its actor there and feeds `.timerFired`,
/// which the engine ignores when the timer is stale.
public struct EngineHost<Engine: HostedCallEngine>: Sendable {
    public private(set) var engine: Engine
    /// Its clock and scheduler (shared by the hosts given the same context).
    public let context: EngineContext
    private var timers: ScheduledTimers

    public var clock: any EngineClock { context.clock }

    public init(engine: Engine, clock: any EngineClock = SystemClock(), scheduler: any TimerScheduling = TimerScheduler.shared) {
        self.init(engine: engine, context: EngineContext(clock: clock, scheduler: scheduler))
    }

    /// A host on a context it shares with others (a fleet's devices share one).
    public init(engine: Engine, context: EngineContext) {
        self.engine = engine
        self.context = context
        self.timers = ScheduledTimers(context: context)
    }

    public func nowMs() -> Int64 { clock.nowMs() }
    public func nowSeconds() -> Int64 { clock.nowSeconds() }

    /// Feeds one input; returns the effects that are not timers.
    public mutating func handle(_ input: CallInput, fire: @escaping @Sendable (CallTimer) async -> Void) -> [CallEffect] {
        if case .timerFired(let timer) = input { timers.fired(timer) }
        return applyTimers(engine.handle(input, now: clock.nowMs()), fire: fire)
    }

    /// A local action (press, answer, start a call ...); a refused one throws and changes nothing.
    public mutating func perform(_ action: LocalAction, fire: @escaping @Sendable (CallTimer) async -> Void)
        throws(CallActionError) -> [CallEffect]
    {
        applyTimers(try engine.perform(action, now: clock.nowMs()), fire: fire)
    }

    /// PROTOCOL.md 3.3 shutdown: the engine's last effects; afterwards no timer is armed.
    public mutating func shutdown() -> [CallEffect] {
        let effects = engine.handle(.shutdown, now: clock.nowMs()).filter {
            switch $0 {
            case .armTimer, .cancelTimer: false
            default: true
            }
        }
        timers.cancelAll()
        return effects
    }

    /// Forgets every armed timer (the owner vanishes without a word).
    public mutating func cancelAllTimers() { timers.cancelAll() }

    /// Timers armed and not yet fired or cancelled.
    public var armedTimerCount: Int { timers.armedCount }

    private mutating func applyTimers(_ effects: [CallEffect], fire: @escaping @Sendable (CallTimer) async -> Void) -> [CallEffect] {
        var rest: [CallEffect] = []
        rest.reserveCapacity(effects.count)
        for effect in effects {
            switch effect {
            case .armTimer(let timer, let at):
                timers.arm(timer, atMs: at, nowMs: clock.nowMs(), fire: fire)
            case .cancelTimer(let timer):
                timers.cancel(timer)
            default:
                rest.append(effect)
            }
        }
        return rest
    }
}
