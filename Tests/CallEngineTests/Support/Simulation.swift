import IPCWire
@testable import CallEngine

/// An in-memory world for driving a device engine and several app engines against each other on
/// a virtual clock: messages take `latencyMs`, timers fire exactly when due, media links come up
/// `mediaUpAfterMs` after an answer (unless turned off). Nothing sleeps: hours take milliseconds.
final class Simulation {
    enum Node: Hashable { case device, app(String) }

    struct Sent {
        var at: Int64
        var message: CallMessage
    }

    private struct Pending {
        var at: Int64
        var seq: Int
        var node: Node
        var input: CallInput
    }

    private(set) var now: Int64
    var device: DeviceCallEngine
    var apps: [String: AppCallEngine] = [:]
    var latencyMs: Int64 = 5
    var mediaUpAfterMs: Int64? = 300
    /// Messages for which this returns true are lost on the way.
    var drop: (Sent) -> Bool = { _ in false }
    private(set) var log: [Sent] = []
    private(set) var records: [Node: [CallRecord]] = [:]
    private(set) var actionErrors: [CallActionError] = []
    private var pending: [Pending] = []
    private var armed: [Node: [CallTimer: Int64]] = [:]
    private var seq = 0

    init(device: DeviceCallEngine, apps: [AppCallEngine], start: Int64 = t0) {
        self.device = device
        for app in apps { self.apps[app.config.userId] = app }
        self.now = start
    }

    /// Feeds `input` to `node` now and carries out its effects.
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

    /// Runs every event due up to `end`, in time order; the clock ends at `end`.
    func run(until end: Int64) {
        while let next = pending.indices.min(by: { (pending[$0].at, pending[$0].seq) < (pending[$1].at, pending[$1].seq) }),
              pending[next].at <= end {
            let event = pending.remove(at: next)
            now = event.at
            if case .timerFired(let t) = event.input {
                // Cancelled or re-armed since: the glue would not fire it.
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
    func sentMessages(_ event: CallEvent, from: String? = nil) -> [Sent] {
        log.filter { $0.message.event == event && (from == nil || $0.message.curId == from) }
    }

    private func schedule(_ input: CallInput, to node: Node, at: Int64) {
        seq += 1
        pending.append(Pending(at: at, seq: seq, node: node, input: input))
    }

    private func apply(_ effects: [CallEffect], of node: Node) {
        for effect in effects {
            switch effect {
            case .send(let message):
                let sent = Sent(at: now, message: message)
                log.append(sent)
                if drop(sent) { continue }
                if message.targetId == device.config.devId {
                    schedule(.received(message), to: .device, at: now + latencyMs)
                } else if apps[message.targetId] != nil {
                    schedule(.received(message), to: .app(message.targetId), at: now + latencyMs)
                }
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
            case .actionRefused(_, let error):
                actionErrors.append(error)
            case .startRinging, .stopRinging, .peerRinging, .closeMediaLink, .refused,
                 .sendDoorbell, .announcePress, .ringTimedOut, .leaveMessage, .refusedDoorbell:
                break
            }
        }
    }
}
