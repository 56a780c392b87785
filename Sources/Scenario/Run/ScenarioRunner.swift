import AppSimulator
import CallEngine
import Emulator
import Foundation
import Synchronization
import IPCWire

/// Runs a scenario's steps against a world: actions in order, waits and expectations checked on
/// the recorded timeline, `on:` fanning out over devices at once, `repeat` blocks, delays from
/// their distributions. A failed wait stops that device's remaining steps; a failed expectation is
/// recorded and the run goes on.
///
/// Every wait is driven by events: the world reports each device and app event (recorded on the
/// timeline, which wakes the waits), a condition is re-checked at each change and once more at its
/// deadline, and time is the world's clock (`ScenarioClock`: real, or the simulator's).
public final class ScenarioRunner: Sendable {
    public let scenario: Scenario
    let world: any ScenarioWorld
    let timeline: Timeline
    var clock: any ScenarioClock { world.clock }
    /// The steps' results so far and the delays' random source.
    private let state: Mutex<(results: [StepResult], rng: SplitMix64)>

    public init(scenario: Scenario, world: any ScenarioWorld) {
        self.scenario = scenario
        self.world = world
        timeline = Timeline(clock: world.clock)
        state = Mutex(([], SplitMix64(seed: scenario.seed ?? UInt64.random(in: 0...UInt64.max))))
    }

    /// Starts a world for the scenario, runs it, closes the world. Never throws: a setup problem is
    /// the result's `setupError`. `simulated`: the world is the deterministic simulator on simulated
    /// time (`SimulatedWorld`; no broker), else devices and app users in this process on a broker.
    public static func run(_ scenario: Scenario, brokerURL: String? = nil, appMode: AppMode = .simulated,
                           simulated: Bool = false) async -> ScenarioResult {
        let started = Date()
        if simulated { return await runSimulated(scenario, appMode: appMode) }
        if appMode == .external, let step = scenario.allSteps.first(where: { $0.kind.needsSimulatedApp }) {
            return ScenarioResult(scenario: scenario, appMode: appMode, brokerURL: brokerURL ?? "", startedAt: started, endedAt: Date(),
                                  setupError: "\(step.title) needs the simulated app (--app simulated); with --app external the real app plays that part",
                                  steps: [], observations: [], calls: [])
        }
        let world: InProcessWorld
        do {
            world = try await InProcessWorld.start(scenario, brokerURL: brokerURL, appMode: appMode)
        } catch {
            return ScenarioResult(scenario: scenario, appMode: appMode, brokerURL: brokerURL ?? "(private mosquitto)", startedAt: started,
                                  endedAt: Date(), setupError: "cannot start the devices: \(error)", steps: [], observations: [], calls: [])
        }
        let result = await ScenarioRunner(scenario: scenario, world: world).run()
        await world.close()
        return result
    }

    /// Runs the steps against the world (which the caller closes).
    public func run() async -> ScenarioResult {
        let wallStart = Date()
        clock.started(1)
        let started = clock.now
        let pumps = await startRecording()
        clock.started(1)
        let sampler = Task { [weak self, clock] in
            await self?.sampleVideo()
            clock.ended()
        }
        _ = await run(scenario.steps, device: 0, iteration: [])
        // Late events (the last hang-up's echo) still land on the timeline.
        await clock.sleep(0.2)
        sampler.cancel()
        for p in pumps { p.cancel() }
        let ended = clock.now
        clock.finish()
        let observations = timeline.all
        var result = ScenarioResult(scenario: scenario, appMode: world.appMode, brokerURL: world.brokerURL, startedAt: started, endedAt: ended,
                                    setupError: nil, steps: state.withLock { $0.results }, observations: observations,
                                    calls: CallSummary.build(from: observations))
        if clock is SimulatedScenarioClock { result.wallSeconds = Date().timeIntervalSince(wallStart) }
        return result
    }

    // MARK: Recording

    /// Subscribes to every device and app event: each lands on the timeline (or, for the app's own
    /// state changes, just wakes the waits).
    private func startRecording() async -> [Task<Void, Never>] {
        var users: Set<String> = []
        for app in scenario.apps {
            if app.isPerDevice {
                for i in 0..<world.devices.count { users.insert(expandIndex(app.user, index: i)) }
            } else {
                users.insert(app.user)
            }
        }
        return await world.observe(users: users.sorted()) { [weak self] event in self?.record(event) }
    }

    private func record(_ event: WorldEvent) {
        switch event {
        case .device(let devId, let e):
            switch e {
            case .sent(let m): timeline.record(devId, session: m.sessionId, .message(m, .sent))
            case .received(let m): timeline.record(devId, session: m.sessionId, .message(m, .received))
            case .callEnded(let r): timeline.record(devId, session: r.sessionId, .deviceEnded(r))
            case .offerRefused(let s, let from, let why): timeline.record(devId, session: s, .offerRefused(session: s, from: from, why: why))
            case .connection(let up, let detail): timeline.record(devId, .connection(up: up, detail: detail))
            case .refused(let why): timeline.record(devId, .refused(why))
            case .ringing, .ringingStopped: clock.changed()
            case .receivedDoorbell, .sentDoorbell, .pressed, .dataPointsReported, .fellAsleep, .wokeUp, .mediaStored:
                recordDoorbell(devId, e)  // PROTOCOL.md 8
            }
        case .app(let user, let e):
            if case .callEnded(let r) = e {
                timeline.record(r.peers.first ?? "", session: r.sessionId, .appEnded(user: user, r))
            } else {
                // The app's own view moved (it rings, holds the answer ...): the waits on it re-check.
                clock.changed()
            }
        }
    }

    /// Every 500 ms: frames each device sent on each link, and frames each app decoded, with the rate.
    private func sampleVideo() async {
        var last: [String: (Int, Date)] = [:]
        while !Task.isCancelled {
            await clock.sleep(0.5)
            if Task.isCancelled { return }
            let now = clock.now
            for d in world.devices {
                for (session, frames) in await d.framesSent() {
                    let key = d.devId + "/" + session
                    let fps = last[key].map { Double(frames - $0.0) / max(now.timeIntervalSince($0.1), 0.001) } ?? 0
                    last[key] = (frames, now)
                    timeline.record(d.devId, session: session, .video(session: session, user: nil, frames: frames, fps: fps))
                }
                guard world.appMode == .simulated, let call = timeline.currentCall(d.devId) else { continue }
                for u in appUsers(of: d.devId, session: call.session) {
                    guard let app = world.app(u), let stats = await app.videoStats(sessionId: call.session), stats.framesDecoded > 0 else { continue }
                    let key = d.devId + "/" + call.session + "/" + u
                    let fps = last[key].map { Double(stats.framesDecoded - $0.0) / max(now.timeIntervalSince($0.1), 0.001) } ?? 0
                    last[key] = (stats.framesDecoded, now)
                    timeline.record(d.devId, session: call.session,
                                    .video(session: call.session, user: u, frames: stats.framesDecoded, fps: fps))
                }
            }
        }
    }

    private func appUsers(of devId: String, session: String) -> [String] {
        var out: [String] = []
        for o in timeline.of(devId, session: session) {
            guard let (m, d) = o.message else { continue }
            let u = d == .sent ? m.targetId : m.curId
            if !out.contains(u) { out.append(u) }
        }
        return out
    }

    // MARK: Steps

    /// Runs `steps` for one device; false when a failed wait or action stopped them.
    private func run(_ steps: [Step], device: Int, iteration: [Int]) async -> Bool {
        for step in steps {
            if let after = step.after { await sleep(after) }
            let targets: [Int]
            switch step.on {
            case nil: targets = [device]
            case .all?: targets = Array(world.devices.indices)
            case .first(let n)?: targets = Array(world.devices.indices.prefix(n))
            }
            if targets.count == 1, let only = targets.first {
                guard await execute(step, device: only, iteration: iteration) else { return false }
            } else {
                // Each branch is a part of the run the clock waits for; this one waits on them.
                let branches = Branches(clock: clock, count: targets.count)
                let ok = await withTaskGroup(of: Bool.self) { group in
                    for t in targets {
                        group.addTask {
                            let r = await self.execute(step, device: t, iteration: iteration)
                            branches.done()
                            return r
                        }
                    }
                    clock.ended()
                    var all = true
                    for await r in group { all = all && r }
                    return all
                }
                guard ok else { return false }
            }
        }
        return true
    }

    private func execute(_ step: Step, device index: Int, iteration: [Int]) async -> Bool {
        guard world.devices.indices.contains(index) else { return false }
        let device = world.devices[index]
        let started = clock.now
        let expand: @Sendable (String) -> String = { expandIndex($0, index: index) }
        func finish(_ kind: StepResult.Kind, passed: Bool, failure: String? = nil, measure: Measure? = nil) -> Bool {
            let r = StepResult(step: step, kind: kind, device: device.devId, iteration: iteration, passed: passed,
                               failure: failure, measure: measure, startedAt: started, seconds: clock.now.timeIntervalSince(started))
            state.withLock { $0.results.append(r) }
            return passed || kind == .expect
        }
        switch step.kind {
        case .repeatBlock(let times, let inner):
            for i in 1...times {
                guard await run(inner, device: index, iteration: iteration + [i]) else { return false }
            }
            return true
        case .wait(.doorbell(let c), let timeout):
            let (ok, seen) = await checkDoorbell(c, limit: timeout, device: device, expand: expand)
            return finish(.wait, passed: ok, failure: ok ? nil : failureText(step, device.devId, iteration, expected: c.summary + " within \(formatNumber(timeout)) s", seen: seen))
        case .expect(.doorbell(let c), let within):
            let (ok, seen) = await checkDoorbell(c, limit: within, device: device, expand: expand)
            var expected = c.summary
            if let within { expected += " (within \(formatNumber(within)) s)" }
            return finish(.expect, passed: ok, failure: ok ? nil : failureText(step, device.devId, iteration, expected: expected, seen: seen))
        case .wait(let c, let timeout):
            let check = ConditionCheck(condition: c, world: world, device: device, timeline: timeline, user: expand, start: started)
            let (ok, seen, m) = await check.run(limit: timeout)
            return finish(.wait, passed: ok, failure: ok ? nil : failureText(step, device.devId, iteration, expected: c.summary + " within \(formatNumber(timeout)) s", seen: seen), measure: m)
        case .expect(let c, let within):
            let check = ConditionCheck(condition: c, world: world, device: device, timeline: timeline, user: expand, start: started)
            let (ok, seen, m) = await check.run(limit: within)
            var expected = c.summary
            if let within { expected += " (within \(formatNumber(within)) s)" }
            return finish(.expect, passed: ok, failure: ok ? nil : failureText(step, device.devId, iteration, expected: expected, seen: seen), measure: m)
        default:
            do {
                try await act(step.kind, device: device, expand: expand)
                return finish(.action, passed: true)
            } catch {
                return finish(.action, passed: false,
                              failure: failureText(step, device.devId, iteration, expected: "\(step.kind.summary) to be carried out", seen: "refused: \(error)"))
            }
        }
    }

    private func failureText(_ step: Step, _ devId: String, _ iteration: [Int], expected: String, seen: String?) -> String {
        var s = "\(step.title) on \(devId)"
        if !iteration.isEmpty { s += " [iteration \(iteration.map(String.init).joined(separator: "."))]" }
        return s + ": expected \(expected); \(seen ?? "saw nothing")"
    }

    func app(_ user: String) throws -> any ScenarioAppDriver {
        guard let a = world.app(user) else { throw ScenarioActionError("no simulated app user '\(user)' (with --app external the real app plays it)") }
        return a
    }

    private func act(_ kind: StepKind, device: any ScenarioDeviceDriver, expand: (String) -> String) async throws {
        let devId = device.devId
        switch kind {
        case .press(let targets, let type, let timeout):
            let t0 = clock.now
            let session = try await device.press(targets: targets.map(expand), callType: type, timeoutSeconds: timeout)
            timeline.beginCall(devId, session: session, at: t0)
            timeline.record(devId, session: session, .action("press" + (targets.isEmpty ? "" : " -> " + targets.map(expand).joined(separator: ", "))), at: t0)
        case .call(let user, let type, let channel, let timeout):
            let u = expand(user)
            let t0 = clock.now
            let session = try await app(u).startCall(devId: devId, timeoutSeconds: timeout, callType: type, channelType: channel)
            timeline.beginCall(devId, session: session, at: t0)
            timeline.record(devId, session: session, .action("\(u) calls"), at: t0)
        case .answer(let a):
            try await perform(a, device, expand, "answers", when: .ringingIncoming) { try await $0.answer() } app: { try await $0.answer() }
        case .reject(let a):
            try await perform(a, device, expand, "rejects", when: .ringingIncoming) { try await $0.reject() } app: { try await $0.reject() }
        case .cancel(let a):
            try await perform(a, device, expand, "cancels", when: .ringingOutgoing) { try await $0.cancel() } app: { try await $0.cancel() }
        case .hangUp(.user(let u)) where device.isDoorbell:
            try await hangUpDoorbell(expand(u), device: device)
        case .video(let user, let stream, nil) where device.isDoorbell:
            try await openDoorbellVideo(expand(user), stream: stream, device: device)
        case .doorbell(let action):
            try await actDoorbell(action, device: device, expand: expand)
        case .hangUp(let a):
            try await perform(a, device, expand, "hangs up", when: .answered) { try await $0.hangUp() } app: { try await $0.hangUp() }
        case .busy(let user):
            try await perform(.user(user), device, expand, "replies busy", when: .ringingIncoming) { _ in } app: { try await $0.busy() }
        case .policy(.device, let p):
            try await device.setAnswerPolicy(p)
            timeline.record(devId, session: timeline.currentCall(devId)?.session, .action("device policy \(policyName(p))"))
        case .policy(.user(let user), let p):
            try await app(expand(user)).setIncomingPolicy(p)
            timeline.record(devId, .action("\(expand(user)) policy \(policyName(p))"))
        case .fault(let f):
            try await device.inject(f)
            timeline.record(devId, session: timeline.currentCall(devId)?.session, .action("fault: \(f)"))
        case .video(let user, let stream, let auth):
            let u = expand(user)
            guard let session = timeline.currentCall(devId)?.session else { throw ScenarioActionError("no call to open video for") }
            let user = try app(u)
            if appUsers(of: devId, session: session).contains(u) {
                // PROTOCOL.md 3.1.6: the app opens the link once it has the answer; the device may
                // have sent it a moment before the app read it.
                let holds = await clock.waitUntil(clock.now.addingTimeInterval(3)) { await user.answeredSession() == session }
                guard holds else {
                    throw ScenarioActionError("\(u) did not hold the answer of \(session) within 3 s (the app's call state was \(await user.phase().rawValue))")
                }
            }
            try await user.openVideo(sessionId: session, devId: devId, stream: stream, auth: auth)
            timeline.record(devId, session: session, .action("\(u) opens video" + (auth == nil ? "" : " (auth overridden)")))
        case .sleep(let d):
            await sleep(d)
        case .wait, .expect, .repeatBlock:
            break
        }
    }

    /// An app user acts once its own view has caught up (the device may have sent the `call` or
    /// `answer` a moment before the app read it): it waits up to 3 s for `phase` (on the app's
    /// events), and fails naming the state it waited for when the phone never gets there.
    private func perform(_ actor: Actor, _ device: any ScenarioDeviceDriver, _ expand: (String) -> String, _ verb: String,
                         when phase: CallPhase,
                         device deviceAction: (any ScenarioDeviceDriver) async throws -> Void,
                         app appAction: (any ScenarioAppDriver) async throws -> Void) async throws {
        let who: String
        switch actor {
        case .device:
            try await deviceAction(device)
            who = "device"
        case .user(let u):
            who = expand(u)
            let user = try app(who)
            let reached = await clock.waitUntil(clock.now.addingTimeInterval(3)) { await user.phase() == phase }
            guard reached else {
                throw ScenarioActionError("\(who)'s phone did not reach \(phase.rawValue) within 3 s (it was \(await user.phase().rawValue))")
            }
            try await appAction(user)
        }
        timeline.record(device.devId, session: timeline.currentCall(device.devId)?.session, .action("\(who) \(verb)"))
    }

    private func sleep(_ d: Distribution) async {
        let seconds = state.withLock { d.sample(using: &$0.rng) }
        await clock.sleep(seconds)
    }
}

/// The `on:` branches of one step, as parts of the run the clock waits for: they count from before
/// they start, and the last one to end hands its part back to the step that waits on them (so the
/// simulated clock never sees a moment where nobody runs between the branches and the step).
final class Branches: Sendable {
    private let left: Mutex<Int>
    private let clock: any ScenarioClock

    init(clock: any ScenarioClock, count: Int) {
        self.clock = clock
        left = Mutex(count)
        clock.started(count)
    }

    func done() {
        let last = left.withLock { n -> Bool in
            n -= 1
            return n == 0
        }
        if !last { clock.ended() }
    }
}

/// A small seedable generator (SplitMix64) so a seeded scenario draws the same delays every run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
