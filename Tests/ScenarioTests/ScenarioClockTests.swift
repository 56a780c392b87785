import Foundation
import Scenario
import Synchronization
import Testing

/// The clocks the runner waits on (docs/scenarios.md, "How a run works" and "Simulated time").
@Suite("Scenario clocks") struct ScenarioClockTests {
    /// A world whose events are at fixed times; each reports a change.
    final class FixedEvents: DiscreteEventWorld {
        let times: Mutex<[Int64]>
        let ran = Mutex<[Int64]>([])
        let clock: SimulatedScenarioClock

        init(_ times: [Int64], clock: SimulatedScenarioClock) {
            self.times = Mutex(times)
            self.clock = clock
        }

        func nextEventTime() -> Int64? { times.withLock { $0.first } }

        func runNextEvent(at timeMs: Int64) {
            times.withLock { _ = $0.removeFirst() }
            ran.withLock { $0.append(timeMs) }
            clock.changed()
        }
    }

    @Test("real time: a change wakes a waiter before its deadline; without one the deadline ends the wait")
    func wallClock() async {
        let clock = WallScenarioClock()
        let seen = clock.version
        let waiter = Task { await clock.wait(after: seen, until: clock.now.addingTimeInterval(30)) }
        // The waiter may not be registered yet: a change after `seen` wakes it either way.
        clock.changed()
        #expect(await waiter.value == true)
        let t0 = Date()
        let timedOut = await clock.wait(after: clock.version, until: clock.now.addingTimeInterval(0.05))
        #expect(timedOut == false)
        #expect(Date().timeIntervalSince(t0) >= 0.04)
    }

    @Test("simulated time: a 30 s wait wakes at the world's event 5 s in, and a sleep jumps to its deadline, in no wall time")
    func simulatedClock() async {
        let start: Int64 = 1_000_000
        let clock = SimulatedScenarioClock(startMs: start)
        let world = FixedEvents([start + 5_000, start + 10_000_000], clock: clock)
        clock.drive(world)
        let t0 = Date()
        clock.started(1)
        let woken = await clock.wait(after: clock.version, until: clock.now.addingTimeInterval(30))
        #expect(woken == true)
        #expect(clock.nowMs == start + 5_000)
        // A sleep (no change wakes it) ends at its deadline, before the world's next event: an
        // hour of simulated time.
        _ = await clock.wait(after: nil, until: clock.now.addingTimeInterval(3600))
        #expect(clock.nowMs == start + 5_000 + 3_600_000)
        #expect(world.ran.withLock { $0 } == [start + 5_000])
        clock.finish()
        // An hour of simulated time took far less real time (a loaded machine under parallel
        // swift test once took 20 s for the few hops this is; a clock that slept would take the hour).
        #expect(Date().timeIntervalSince(t0) < 600)
    }

    @Test("simulated time stands still while a part of the run is busy")
    func timeWaitsForParts() async {
        let start: Int64 = 1_000_000
        let clock = SimulatedScenarioClock(startMs: start)
        let world = FixedEvents([start + 1_000], clock: clock)
        clock.drive(world)
        clock.started(2)  // this task, and another part (below) that is busy until it ends
        let other = Task {
            for _ in 0..<50 { await Task.yield() }  // give a driver that ignored it every chance to run
            let seen = clock.nowMs
            clock.ended()
            return seen
        }
        let woken = await clock.wait(after: clock.version, until: clock.now.addingTimeInterval(10))
        #expect(await other.value == start, "no event ran while the other part was busy")
        #expect(woken == true)
        #expect(clock.nowMs == start + 1_000)
        clock.finish()
    }
}
