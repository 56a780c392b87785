import CallEngine
import IPCWire

// libFuzzer target: the call engine (both roles) and the doorbell call machines of PROTOCOL.md 8
// (device and app side) fed a random sequence of inputs: received events with hostile numbers,
// `video_doorbell` messages and 43 presses (doorbell machines), timer firings (armed or stale),
// local actions, media link changes and clock jumps, then a shutdown. Invariants checked after every step (issue 10):
// - at most one session, and every session that starts ends exactly once (a `callEnded` record);
// - the timers the effects armed are exactly the timers the engine has armed; nothing of a session
//   is armed after its end, nothing at all after the shutdown;
// - a refusal (and a reply that is only messages) leaves phase, session and timers as they were;
// - nothing is sent after the shutdown.

private let devId = "dev1"
private let userId = "u1"

/// Reads the fuzzer's bytes as choices; past the end every read is 0.
private struct Choices {
    let bytes: [UInt8]
    var index = 0
    var exhausted: Bool { index >= bytes.count }

    mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func pick<T>(_ options: [T]) -> T { options[Int(byte()) % options.count] }

    mutating func int64() -> Int64 {
        var value: UInt64 = 0
        for _ in 0..<8 { value = value << 8 | UInt64(byte()) }
        return Int64(bitPattern: value)
    }

    /// A time near `now`, or one of the extremes.
    mutating func time(near now: Int64) -> Int64 {
        switch byte() % 8 {
        case 0: return .max
        case 1: return .min
        case 2: return 0
        case 3: return now &- Int64(byte())
        case 4: return int64()
        default: return now &+ Int64(byte()) * 1000
        }
    }
}

private protocol Engine {
    mutating func handle(_ input: CallInput, now: Int64) -> [CallEffect]
    var phase: CallPhase { get }
    var session: CallSessionSnapshot? { get }
    var armedTimers: [(timer: CallTimer, at: Int64)] { get }
}

extension DeviceCallEngine: Engine {}
extension AppCallEngine: Engine {}
extension DoorbellCallEngine: Engine {}
extension AppDoorbellEngine: Engine {}

private struct Observed: Equatable {
    var phase: CallPhase
    var session: CallSessionSnapshot?
    var timers: [CallTimer: Int64]

    init(_ engine: some Engine) {
        phase = engine.phase
        session = engine.session
        timers = Dictionary(engine.armedTimers.map { ($0.timer, $0.at) }, uniquingKeysWith: { _, last in last })
    }
}

private func message(_ c: inout Choices, now: Int64, isDevice: Bool) -> CallMessage {
    let local = isDevice ? devId : userId
    let peers = isDevice ? [userId, "u2", "u3", "", devId] : [devId, "dev2", "", userId]
    let event = c.pick(CallEvent.allCases)
    var m = CallMessage(event: event, curId: c.pick(peers), targetId: c.pick([local, local, "other", ""]),
                        sessionId: c.pick(["s1", "s2", "p1", ""]))
    if event == .call || c.byte() & 1 == 0 { m.timeout = c.time(near: now) }
    m.callType = c.pick([nil, .oneToOne, .oneToMore, .oneToMoreSpecial])
    switch c.byte() % 5 {
    case 0: m.extra = nil
    case 1: m.extra = CallExtra(bizType: c.pick([nil, "screen_ipc", "x"]), channelType: Int(truncatingIfNeeded: c.int64()))
    case 2: m.extra = CallExtra(problem: "'data.data.extra.keepConnect' must be a boolean")
    default: m.extra = CallExtra(channelType: c.pick([nil, 0, 1, 2]))
    }
    if c.byte() % 8 == 0 { m.problem = "field 'data.data.callType' has value 9; expected 1, 2 or 3" }
    m.reason = c.pick([nil, "busy", "timeout", "heartbeat_timeout", "??"])
    return m
}

/// A `video_doorbell` message (PROTOCOL.md 8.2) about one of the calls a press may start.
private func doorbellMessage(_ c: inout Choices) -> VideoDoorbellMessage {
    VideoDoorbellMessage(devId: c.pick([devId, devId, "dev2"]), uid: c.pick([nil, userId, "u2", "u3", "", devId, "mallory"]),
                         event: c.pick(DoorbellEvent.allCases), eData: c.pick(["p1", "p1", "s1", "c1", ""]),
                         reason: c.pick([nil, "answered_by_other", "heartbeat_timeout", "shutdown", "??"]))
}

/// A doorbell input: a `video_doorbell` message, or (app side) a 43 press.
private func doorbellInput(_ c: inout Choices) -> CallInput {
    if c.byte() % 4 == 0 {
        return .doorbellPressed(DoorbellPressMessage(devId: c.pick([devId, "dev2"]), etype: "doorbell",
                                                     edata: c.pick(["p1", "c1", ""])))
    }
    return .receivedDoorbell(doorbellMessage(&c))
}

private func action(_ c: inout Choices, now: Int64) -> LocalAction {
    switch c.byte() % 11 {
    case 0:
        let timeout: Int64? = c.pick([nil, 1, 30_000, 0, -1, .max, .min])
        return .press(DoorbellPress(sessionId: c.pick(["p1", "s1", ""]), targets: c.pick([[], [userId], ["u2", "u3", userId], [devId, ""]]),
                                    callType: c.pick([nil, .oneToOne, .oneToMore, .oneToMoreSpecial]), timeoutMs: timeout))
    case 1:
        return .startCall(StartCall(targetId: c.pick([devId, ""]), sessionId: c.pick(["a1", "s1", ""]),
                                    timeoutSeconds: c.pick([30, 0, -5, .max, .min, Int64(c.byte())]),
                                    callType: c.pick([.oneToOne, .oneToMore]), extra: CallExtra()))
    case 2: return .answer
    case 3: return .reject
    case 4: return .busy
    case 5: return .cancel
    case 6: return .hangUp
    case 7: return .setActingBusy(c.byte() & 1 == 0)
    case 8: return .setAnswerPolicy(.answerAfter(ms: c.pick([0, 1000, -1, .max, .min])))
    case 9: return .setAnswerPolicy(c.pick([.reject, .busy, .ignore, .manual]))
    default: return .answer
    }
}

private func run<E: Engine>(_ engine: inout E, _ c: inout Choices, isDevice: Bool, doorbell: Bool = false) {
    var now: Int64 = 1_732_200_000_000
    var armed: [CallTimer: Int64] = [:]
    var open: String?
    var steps = 0

    func apply(_ input: CallInput, at time: Int64) {
        let before = Observed(engine)
        let effects = engine.handle(input, now: time)
        if case .timerFired(let t) = input { armed[t] = nil }
        var ended: [String] = []
        var refused = false
        var onlySends = true
        for effect in effects {
            switch effect {
            case .armTimer(let t, let at): armed[t] = at; onlySends = false
            case .cancelTimer(let t): armed[t] = nil; onlySends = false
            case .callEnded(let record): ended.append(record.sessionId); onlySends = false
            case .refused, .actionRefused, .refusedDoorbell: refused = true
            case .send, .sendDoorbell: break
            default: onlySends = false
            }
        }
        let after = Observed(engine)
        precondition(after.timers == armed, "effects armed \(armed), the engine has \(after.timers) after \(input)")
        precondition(ended.count <= 1, "two sessions ended in one step: \(ended)")
        if let id = ended.first {
            // The open session ends, or one that started and ended in this very step (a policy
            // that rejects at once, an expired press).
            precondition(id == open || (open == nil && before.session == nil),
                         "ended \(id) but the open session was \(String(describing: open))")
            precondition(!armed.keys.contains { $0.sessionId == id }, "timers of \(id) armed after its end: \(armed)")
            open = nil
        }
        if let current = after.session?.sessionId {
            precondition(open == nil || open == current, "session \(String(describing: open)) replaced by \(current) without an end")
            open = current
        }
        // A reply that is only messages of refusal or repetition (stop, busy, the last ring or
        // answer again) changes nothing (3.1.2, 3.4). (A bare state change with no effect is fine:
        // a busy from one of several targets.)
        let replies = effects.compactMap { if case .send(let m) = $0 { m.event } else { nil } }
        let doorbellReplies = effects.compactMap { if case .sendDoorbell(let m) = $0 { m.event } else { nil } }
        let onlyRefusalReplies = onlySends && !(replies.isEmpty && doorbellReplies.isEmpty)
            && replies.allSatisfy { [.stop, .busy, .ring, .answer].contains($0) }
            && doorbellReplies.allSatisfy { [.stop, .answered].contains($0) }
        if refused || (onlyRefusalReplies && isReceived(input)) {
            precondition(before == after, "a refusal or a plain reply changed the state: \(input) -> \(effects)")
        }
    }

    while !c.exhausted && steps < 400 {
        steps += 1
        switch c.byte() % 8 {
        case 0, 1, 2, 3:
            if doorbell, c.byte() & 1 == 0 {
                apply(doorbellInput(&c), at: now)
            } else {
                apply(.received(message(&c, now: now, isDevice: isDevice)), at: now)
            }
        case 4:
            if c.byte() & 3 != 0, let (timer, at) = armed.sorted(by: { $0.value < $1.value }).first {
                now = max(now, at)
                apply(.timerFired(timer), at: now)
            } else {
                apply(.timerFired(CallTimer(c.pick(CallTimer.Kind.allCases), sessionId: c.pick(["s1", "p1", "a1"]))), at: now)
            }
        case 5:
            apply(.local(action(&c, now: now)), at: now)
        case 6:
            let session = c.pick(["s1", "p1", "a1", "s2"])
            apply(c.byte() & 1 == 0 ? .mediaLinkUp(sessionId: session) : .mediaLinkDown(sessionId: session), at: now)
        default:
            // The clock moves on (rarely backwards: a wall clock can jump).
            let step = Int64(c.byte()) * Int64(c.byte()) * 10
            now = c.byte() == 0 ? now &- step : now.addingReportingOverflow(step).overflow ? .max : now + step
        }
    }

    let hadSession = open
    apply(.shutdown, at: now)
    precondition(open == nil, "the session \(String(describing: hadSession)) did not end at shutdown")
    precondition(armed.isEmpty && engine.armedTimers.isEmpty, "timers armed after shutdown: \(armed)")
    // Nothing is sent after the shutdown.
    for _ in 0..<3 {
        let input = doorbell && c.byte() & 1 == 0 ? doorbellInput(&c) : .received(message(&c, now: now, isDevice: isDevice))
        let effects = engine.handle(input, now: now)
        precondition(!effects.contains {
            switch $0 {
            case .send, .sendDoorbell, .announcePress, .leaveMessage: true
            default: false
            }
        }, "sent after shutdown: \(effects)")
        precondition(engine.armedTimers.isEmpty)
    }
}

private func isReceived(_ input: CallInput) -> Bool {
    if case .received = input { true } else { false }
}

func fuzzCallEngine(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    var c = Choices(bytes: Array(UnsafeBufferPointer(start: data, count: size)))
    let pick = c.byte()
    if pick & 0x80 != 0 {
        // The doorbell machines (PROTOCOL.md 8.1, 8.2, 8.5).
        if pick & 1 == 0 {
            var engine = DoorbellCallEngine(config: DoorbellEngineConfig(
                devId: devId, kind: "doorbell", household: c.pick([[userId, "u2", "u3"], [userId], []]),
                ringTimeoutMs: c.pick([25_000, 1, 0, -1, .max]), heartbeatTimeoutMs: c.pick([30_000, .max, .min]),
                messagesEnabled: c.byte() & 1 == 0, messageWindowMs: c.pick([15_000, 0, -5, .max])))
            run(&engine, &c, isDevice: true, doorbell: true)
        } else {
            var engine = AppDoorbellEngine(config: AppDoorbellConfig(
                userId: userId, devices: c.pick([[], [devId]]),
                ringTimeoutMs: c.pick([25_000, .max, .min]),
                policy: c.pick([.manual, .answerAfter(ms: 0), .answerAfter(ms: 2000), .reject, .rejectAfter(ms: 500), .ignore])))
            run(&engine, &c, isDevice: false, doorbell: true)
        }
    } else if pick & 1 == 0 {
        var engine = DeviceCallEngine(config: DeviceEngineConfig(
            devId: devId, answerPolicy: c.pick([.manual, .answerAfter(ms: 0), .answerAfter(ms: 2000), .reject, .busy, .ignore]),
            household: [userId, "u2", "u3"], defaultCallType: c.pick(CallType.allCases)))
        run(&engine, &c, isDevice: true)
    } else {
        var engine = AppCallEngine(config: AppEngineConfig(
            userId: userId, incomingPolicy: c.pick([.manual, .answerAfter(ms: 0), .reject, .busy, .ignore])))
        run(&engine, &c, isDevice: false)
    }
    return 0
}

/// libFuzzer's entry point (used when libFuzzer's own main runs the program).
@_cdecl("LLVMFuzzerTestOneInput")
public func llvmFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 { fuzzCallEngine(data, size) }
