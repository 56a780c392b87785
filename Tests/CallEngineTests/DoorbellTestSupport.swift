import IPCWire
@testable import CallEngine

/// Shared names and builders for the doorbell engine tests (PROTOCOL.md 8).
let callId = "617bdf7a1732200000"

func doorbellEngine(messages: Bool = false, household: [String] = [u1, u2, u3]) -> DoorbellCallEngine {
    DoorbellCallEngine(config: DoorbellEngineConfig(devId: dev, kind: "ac_doorbell", household: household,
                                                    messagesEnabled: messages))
}

/// A `video_doorbell` message about `call` from (or naming) `uid`.
func vd(_ event: DoorbellEvent, _ uid: String?, _ call: String = callId, reason: String? = nil) -> VideoDoorbellMessage {
    VideoDoorbellMessage(devId: dev, uid: uid, event: event, eData: call, reason: reason)
}

/// The `video_doorbell` messages among `effects`, in order.
func doorbellSent(_ effects: [CallEffect]) -> [VideoDoorbellMessage] {
    effects.compactMap { if case .sendDoorbell(let m) = $0 { m } else { nil } }
}

/// The doorbell refusals among `effects`.
func doorbellRefusals(_ effects: [CallEffect]) -> [Refusal] {
    effects.compactMap { if case .refusedDoorbell(_, let why) = $0 { why } else { nil } }
}

/// A doorbell whose call `callId` rings at the household since t0.
func ringingDoorbell(messages: Bool = false) -> DoorbellCallEngine {
    var engine = doorbellEngine(messages: messages)
    _ = engine.handle(.local(.press(DoorbellPress(sessionId: callId))), now: t0)
    return engine
}

/// A doorbell whose call `callId` was accepted by `user` at t0 + 1000.
func connectedDoorbell(by user: String = u1) -> DoorbellCallEngine {
    var engine = ringingDoorbell()
    _ = engine.handle(.receivedDoorbell(vd(.accept, user)), now: t0 + 1000)
    return engine
}

/// A doorbell device and the apps of its household on a virtual clock (PROTOCOL.md 8): the
/// device's messages reach every app (its out topic), each app's reach the device; a press
/// reaches every app as a 43. Messages take `latencyMs`, timers fire exactly when due, links
/// come up `mediaUpAfterMs` after the device expects one.
final class DoorbellSimulation {
    enum Node: Hashable { case device, app(String) }

    struct Sent {
        var at: Int64
        var from: Node
        var message: VideoDoorbellMessage
    }

    private struct Pending {
        var at: Int64
        var seq: Int
        var node: Node
        var input: CallInput
    }

    private(set) var now: Int64
    var device: DoorbellCallEngine
    var apps: [String: AppDoorbellEngine] = [:]
    var latencyMs: Int64 = 5
    var mediaUpAfterMs: Int64? = 300
    var drop: (Sent) -> Bool = { _ in false }
    private(set) var log: [Sent] = []
    private(set) var records: [Node: [CallRecord]] = [:]
    private(set) var presses: [String] = []
    private(set) var messagesLeft: [String] = []
    private(set) var ringTimeouts: [String] = []
    private var pending: [Pending] = []
    private var armed: [Node: [CallTimer: Int64]] = [:]
    private var seq = 0

    init(device: DoorbellCallEngine, apps: [AppDoorbellEngine], start: Int64 = t0) {
        self.device = device
        for app in apps { self.apps[app.config.userId] = app }
        self.now = start
    }

    func input(_ input: CallInput, to node: Node) {
        let effects: [CallEffect]
        switch node {
        case .device:
            effects = device.handle(input, now: now)
        case .app(let user):
            guard var app = apps[user] else { return }
            effects = app.handle(input, now: now)
            apps[user] = app
        }
        apply(effects, of: node)
    }

    func act(_ action: LocalAction, on node: Node) { input(.local(action), to: node) }

    func press(_ id: String = callId) { act(.press(DoorbellPress(sessionId: id)), on: .device) }

    func run(until end: Int64) {
        while let next = pending.indices.min(by: { (pending[$0].at, pending[$0].seq) < (pending[$1].at, pending[$1].seq) }),
              pending[next].at <= end {
            let event = pending.remove(at: next)
            now = event.at
            if case .timerFired(let t) = event.input {
                guard armed[event.node]?[t] == event.at else { continue }
                armed[event.node]?[t] = nil
            }
            input(event.input, to: event.node)
        }
        now = end
    }

    func run(for ms: Int64) { run(until: now + ms) }

    func records(of node: Node) -> [CallRecord] { records[node] ?? [] }

    /// Messages of `event` sent by `from` (nil: anyone).
    func sent(_ event: DoorbellEvent, from: Node? = nil) -> [Sent] {
        log.filter { $0.message.event == event && (from == nil || $0.from == from) }
    }

    private func schedule(_ input: CallInput, to node: Node, at: Int64) {
        seq += 1
        pending.append(Pending(at: at, seq: seq, node: node, input: input))
    }

    private func apply(_ effects: [CallEffect], of node: Node) {
        for effect in effects {
            switch effect {
            case .sendDoorbell(let message):
                let sent = Sent(at: now, from: node, message: message)
                log.append(sent)
                if drop(sent) { continue }
                if node == .device {
                    for user in apps.keys.sorted() { schedule(.receivedDoorbell(message), to: .app(user), at: now + latencyMs) }
                } else {
                    schedule(.receivedDoorbell(message), to: .device, at: now + latencyMs)
                }
            case .announcePress(let id):
                presses.append(id)
                let press = DoorbellPressMessage(devId: device.config.devId, etype: device.config.kind, edata: id)
                for user in apps.keys.sorted() { schedule(.doorbellPressed(press), to: .app(user), at: now + latencyMs) }
            case .leaveMessage(let id):
                messagesLeft.append(id)
            case .ringTimedOut(let id):
                ringTimeouts.append(id)
            case .armTimer(let t, let at):
                armed[node, default: [:]][t] = at
                schedule(.timerFired(t), to: node, at: at)
            case .cancelTimer(let t):
                armed[node]?[t] = nil
            case .expectMediaLink(let session, let peer):
                if node == .device, let after = mediaUpAfterMs {
                    schedule(.mediaLinkUp(sessionId: session), to: .device, at: now + after)
                    schedule(.mediaLinkUp(sessionId: session), to: .app(peer), at: now + after)
                }
            case .callEnded(let record):
                records[node, default: []].append(record)
            case .send, .startRinging, .stopRinging, .peerRinging, .closeMediaLink, .refused, .actionRefused,
                 .refusedDoorbell:
                break
            }
        }
    }
}
