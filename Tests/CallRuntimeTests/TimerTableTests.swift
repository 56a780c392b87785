import CallEngine
import Testing
@testable import CallRuntime

/// Due times reach the timer table from the wire (a call's deadline): none may trap it (issue 10).
@Suite("Timer table: due times at the extremes")
struct TimerTableTests {
    @Test("the delay saturates instead of overflowing", arguments: [
        (Int64.max, Int64.min, Int64.max), (Int64.min, Int64.max, Int64(0)), (Int64(5), Int64(3), Int64(2)),
        (Int64(3), Int64(5), Int64(0)), (Int64.max, Int64(0), Int64.max), (Int64(0), Int64.min, Int64.max),
    ])
    func delay(_ at: Int64, _ now: Int64, _ expected: Int64) {
        #expect(TimerTable.delay(atMs: at, nowMs: now) == expected)
    }

    @Test("arming at the extremes does not trap; a far timer waits, a past one fires at once")
    func armExtremes() async throws {
        let fired = FiredTimers()
        var table = TimerTable()
        let far = CallTimer(.callDeadline, sessionId: "far")
        let past = CallTimer(.callDeadline, sessionId: "past")
        table.arm(far, atMs: .max, nowMs: .min) { t in await fired.add(t) }
        table.arm(past, atMs: .min, nowMs: .max) { t in await fired.add(t) }
        #expect(table.armedCount == 2)
        // The past timer firing proves the moment passed; the far one must not have fired.
        let deadline = ContinuousClock.now + .seconds(5)
        while await fired.all.isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(50))
        #expect(await fired.all == [past])
        table.cancelAll()
        #expect(table.armedCount == 0)
    }
}

private actor FiredTimers {
    var all: [CallTimer] = []
    func add(_ t: CallTimer) { all.append(t) }
}
