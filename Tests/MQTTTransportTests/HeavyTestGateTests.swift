import Testing
import TestSupport

/// The gate that keeps `.heavy` tests a few at a time under `swift test`'s parallel run.
@Suite("Heavy-test gate")
struct HeavyTestGateTests {
    @Test("never more holders than permits; every waiter gets its turn")
    func boundedAndFair() async {
        let gate = HeavyTestGate(permits: 2)
        let held = Collected(0)
        let most = Collected(0)
        let finished = Collected([Int]())
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<8 {
                group.addTask {
                    await gate.acquire()
                    let now = held.withLock { n -> Int in n += 1; return n }
                    most.withLock { $0 = max($0, now) }
                    try? await Task.sleep(for: .milliseconds(5))
                    held.withLock { $0 -= 1 }
                    finished.withLock { $0.append(i) }
                    gate.release()
                }
            }
        }
        #expect(most.snapshot == 2, "two permits: two holders at most, and the 8 tasks overlap")
        #expect(gate.mostHeldAtOnce == 2)
        #expect(finished.snapshot.count == 8)
        // Every permit came back: two more acquire at once without waiting.
        await gate.acquire()
        await gate.acquire()
        gate.release()
        gate.release()
    }

    @Test("a waiter for every permit is served in its turn: a later single waiter does not overtake it")
    func exclusiveWaiterIsNotOvertaken() async {
        let gate = HeavyTestGate(permits: 2)
        let order = Collected([String]())
        await gate.acquire()  // "A" holds one of two
        let exclusive = Task {
            await gate.acquire(2)
            order.withLock { $0.append("exclusive") }
            gate.release(2)
        }
        #expect(await eventually { gate.waiting == 1 })
        let single = Task {
            await gate.acquire()
            order.withLock { $0.append("single") }
            gate.release()
        }
        // Both queued: one permit is free, but the single waiter arrived after the exclusive one.
        #expect(await eventually { gate.waiting == 2 })
        #expect(order.snapshot.isEmpty)
        gate.release()  // "A" ends
        await exclusive.value
        await single.value
        #expect(order.snapshot == ["exclusive", "single"])
        #expect(gate.waiting == 0)
    }
}
