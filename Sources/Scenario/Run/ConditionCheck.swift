import AppSimulator
import CallEngine
import Foundation
import IPCWire
import Synchronization

/// Evaluates one wait or expectation on one device on its timeline and state: now, again at each
/// change the world reports, and once more at the deadline, until the condition holds, fails for
/// good, or its time is up. Time is the run's clock (real or simulated); nothing polls.
struct ConditionCheck {
    enum Verdict {
        case pass(Measure?)
        /// Failed for good: what was seen, and the measure when there is one.
        case fail(String, Measure?)
        /// Not yet; what is seen so far.
        case pending(String)
    }

    let condition: Condition
    let world: any ScenarioWorld
    let device: any ScenarioDeviceDriver
    let timeline: Timeline
    /// Resolves `{index}` in user ids for this device.
    let user: (String) -> String
    /// When the step began.
    let start: Date
    /// The frames condition's measuring window.
    let window = RateWindow()

    /// When this check first saw frames, and how many: set once, read on every later poll.
    final class RateWindow: Sendable {
        private let start = Mutex<(Date, Int)?>(nil)

        /// The first `(time, frames)` given to `begin`.
        var first: (Date, Int)? { start.withLock { $0 } }

        /// Starts the window at `now` unless it has started.
        func begin(_ now: Date, frames: Int) {
            start.withLock { if $0 == nil { $0 = (now, frames) } }
        }
    }

    var clock: any ScenarioClock { timeline.clock }

    /// Waits for a verdict; `limit` is the step's (seconds), else the condition's default.
    func run(limit: Double?) async -> (passed: Bool, seen: String?, measure: Measure?) {
        let deadline = naturalDeadline(limit: limit)
        while true {
            let seen = clock.version
            let verdict = await evaluate(final: false)
            switch verdict {
            case .pass(let m): return (true, nil, m)
            case .fail(let seen, let m): return (false, seen, m)
            case .pending:
                if clock.now >= deadline || Task.isCancelled {
                    switch await evaluate(final: true) {
                    case .pass(let m): return (true, nil, m)
                    case .fail(let seen, let m): return (false, seen, m)
                    case .pending(let seen): return (false, seen, nil)
                    }
                }
            }
            _ = await clock.wait(after: seen, until: deadline)
        }
    }

    private func naturalDeadline(limit: Double?) -> Date {
        let call = timeline.currentCall(device.devId)
        switch condition {
        case .answered(let within) where limit == nil:
            return (call?.start ?? start).addingTimeInterval(within + 0.2)
        case .videoStarted(let ms, _) where limit == nil:
            let answeredAt = answerObservation()?.time ?? start
            return max(answeredAt.addingTimeInterval(ms / 1000 + 0.2), start.addingTimeInterval(0.2))
        default:
            return start.addingTimeInterval(limit ?? condition.defaultWait)
        }
    }

    // MARK: The current call

    private var call: (session: String, start: Date)? { timeline.currentCall(device.devId) }

    /// The device's 308 messages since the current call began (all of them when none has).
    private var callMessages: [(Observation, CallMessage, MessageDirection)] {
        let since = call?.start ?? .distantPast
        return timeline.of(device.devId, session: nil).compactMap { o in
            guard o.time >= since, let (m, d) = o.message else { return nil }
            return (o, m, d)
        }
    }

    private func answerObservation() -> Observation? {
        guard let session = call?.session else { return nil }
        return callMessages.first { $0.1.event == .answer && $0.1.sessionId == session }?.0
    }

    /// The app user on the other end of the current call: who answered the device's call, or who called.
    private func peerUser() -> String? {
        guard let session = call?.session else { return nil }
        let msgs = callMessages.filter { $0.1.sessionId == session }
        if let a = msgs.first(where: { $0.1.event == .answer && $0.2 == .received }) { return a.1.curId }
        if let c = msgs.first(where: { $0.1.event == .call && $0.2 == .received }) { return c.1.curId }
        return nil
    }

    private var recent: String {
        let texts = callMessages.suffix(8).map { $0.0.shortText }
        return texts.isEmpty ? "no call events" : "the call's events: " + texts.joined(separator: ", ")
    }

    // MARK: Evaluating

    private func evaluate(final: Bool) async -> Verdict {
        switch condition {
        case .message(let event, let dir, let peer, let reason):
            let peer = peer.map(user)
            let hit = callMessages.contains { _, m, d in
                d == dir && m.event == event
                    && (peer == nil || (dir == .sent ? m.targetId : m.curId) == peer)
                    && (reason == nil || m.reason == reason)
            }
            return hit ? .pass(nil) : .pending("saw none; \(recent)")

        case .state(let phase):
            let now = await device.phase()
            return now == phase ? .pass(nil) : .pending("the call state was \(now.rawValue)")

        case .connected(let up):
            let now = await device.isConnected()
            return now == up ? .pass(nil) : .pending(now ? "MQTT connected" : "MQTT down")

        case .answered(let within):
            guard let call else { return .fail("no call had started", nil) }
            if let answer = answerObservation() {
                let latency = answer.time.timeIntervalSince(call.start)
                let m = Measure(value: latency, limit: within, unit: "s", atMost: true)
                return latency <= within ? .pass(m) : .fail("answered after \(String(format: "%.2f", latency)) s", m)
            }
            let waited = clock.now.timeIntervalSince(call.start)
            return .pending("no answer after \(String(format: "%.2f", waited)) s; \(recent)")

        case .videoStarted(let withinMs, let who):
            guard let session = call?.session else { return .fail("no call had started", nil) }
            guard let answer = answerObservation() else { return .pending("the call was not answered; \(recent)") }
            var firstMs: Double?
            if world.appMode == .simulated, let u = who.map(user) ?? peerUser(), let app = world.app(u) {
                let stats = await app.videoStats(sessionId: session)
                // The app's own answer time when it has one, else the device's.
                firstMs = stats?.answerToFirstFrameMs ?? stats?.firstFrameAt.map { $0.timeIntervalSince(answer.time) * 1000 }
            } else if let sent = await device.framesSent()[session], sent > 0 {
                firstMs = clock.now.timeIntervalSince(answer.time) * 1000
            }
            if let firstMs {
                let m = Measure(value: firstMs, limit: withinMs, unit: "ms", atMost: true)
                return firstMs <= withinMs ? .pass(m) : .fail("the first frame came \(Int(firstMs)) ms after the answer", m)
            }
            return .pending("no video frame \(Int(clock.now.timeIntervalSince(answer.time) * 1000)) ms after the answer")

        case .frames(let count, let fps, let who):
            guard let session = call?.session else { return .fail("no call had started", nil) }
            var frames = 0
            var rate = 0.0
            if world.appMode == .simulated, let u = who.map(user) ?? peerUser(), let app = world.app(u) {
                let stats = await app.videoStats(sessionId: session)
                frames = stats?.framesDecoded ?? 0
                rate = stats?.fps ?? 0
            } else {
                frames = await device.framesSent()[session] ?? 0
                let samples = timeline.of(device.devId, session: session).compactMap { o -> Double? in
                    if case .video(_, nil, _, let f) = o.kind, f > 0 { f } else { nil }
                }
                rate = samples.isEmpty ? 0 : samples.reduce(0, +) / Double(samples.count)
            }
            // The rate this check saw: frames over its own window (at least 1 s) once frames flow;
            // a stream's first second is bursty (the decoder catches up), so the window starts late.
            let now = clock.now
            if frames > 0 { window.begin(now, frames: frames) }
            if let (t, f) = window.first, now.timeIntervalSince(t) >= 1 {
                rate = Double(frames - f) / now.timeIntervalSince(t)
            } else if fps != nil, !final {
                return .pending("\(frames) frames, measuring the rate")
            }
            guard frames >= count else {
                return .pending("\(frames) frames" + (fps == nil ? "" : String(format: " at %.1f fps", rate)))
            }
            guard let fps else { return .pass(Measure(value: Double(frames), limit: Double(count), unit: "frames", atMost: false)) }
            let m = Measure(value: rate, limit: fps, unit: "fps", atMost: false)
            return rate >= fps * 0.8 ? .pass(m) : .fail(String(format: "%d frames at %.1f fps (below %.1f, 20%% under %@)", frames, rate, fps * 0.8, formatNumber(fps)), m)

        case .ended(let reason, let outcome):
            guard let session = call?.session else { return .fail("no call had started", nil) }
            let record = timeline.of(device.devId, session: session).compactMap { o -> CallRecord? in
                if case .deviceEnded(let r) = o.kind { r } else { nil }
            }.first
            guard let record else { return .pending("the call had not ended (state \(await device.phase().rawValue)); \(recent)") }
            let got = record.reason?.rawValue ?? record.remoteReason
            let seen = "ended \(record.outcome.rawValue)" + (got.map { " with reason \($0)" } ?? " without a reason")
            if let reason, got != reason { return .fail(seen, nil) }
            if let outcome, record.outcome != outcome { return .fail(seen, nil) }
            return .pass(nil)

        case .noEvent(let event, let dir):
            let hits = callMessages.filter { $0.1.event == event && (dir == nil || $0.2 == dir) }
            if let first = hits.first { return .fail("saw \(first.0.shortText)", nil) }
            return .pass(nil)

        case .sdkError(let who, let code):
            let u = user(who)
            let records = timeline.all.compactMap { o -> CallRecord? in
                if case .appEnded(let name, let r) = o.kind, name == u, o.time >= (call?.start ?? .distantPast) { r } else { nil }
            }
            guard let record = records.last else { return .pending("\(u)'s call had not ended") }
            let got = record.sdkError?.rawValue
            return got == code ? .pass(nil) : .fail("\(u)'s call ended \(record.outcome.rawValue) with " + (got.map { "SDK error \($0)" } ?? "no SDK error"), nil)

        case .offerRefused(let who):
            let u = who.map(user)
            let hit = timeline.of(device.devId, session: nil).contains { o in
                if case .offerRefused(_, let from, _) = o.kind, o.time >= (call?.start ?? .distantPast) { u == nil || from == u } else { false }
            }
            return hit ? .pass(nil) : .pending("no offer refused; \(recent)")

        case .doorbell:
            // Checked by `DoorbellCheck` on the device's events (the runner never polls these).
            return .fail("a doorbell condition is checked by DoorbellCheck", nil)
        }
    }
}
