/// The clock an engine host reads and the scheduler its timers run on, held once by reference
/// (docs/fleet.md "Memory per device"): every device of a fleet shares one, where each host and
/// timer table used to keep its own existentials (40 bytes each, inline in every device).
public final class EngineContext: Sendable {
    public let clock: any EngineClock
    public let scheduler: any TimerScheduling

    public init(clock: any EngineClock = SystemClock(), scheduler: any TimerScheduling = TimerScheduler.shared) {
        self.clock = clock
        self.scheduler = scheduler
    }
}
