import DeviceProfile
import Foundation
import IPCWire
import MQTTTransport
import Synchronization

/// What the load phase of `ipcemu bench fleet` saw.
struct LoadResult {
    var sent = 0
    var rang = 0
    var answered = 0
    var errors = 0
    var lost = 0
    var callToRing: [Double] = []
    var callToAnswer: [Double] = []
    var errorSamples: [String] = []

    var json: [String: Any] {
        let ring = Percentiles(callToRing), answer = Percentiles(callToAnswer)
        return ["sent": sent, "rang": rang, "answered": answered, "errors": errors, "lost": lost,
                "callToRingMs": ["p50": ring.at(50), "p99": ring.at(99), "max": ring.sorted.last ?? 0],
                "callToAnswerMs": ["p50": answer.at(50), "p99": answer.at(99), "max": answer.sorted.last ?? 0]]
    }
}

/// Calls random idle devices at a steady rate as app users would (plain 308 envelopes over MQTT),
/// times `ring` and `answer`, and hangs each call up once answered. A device is called again only
/// after its previous call was hung up (each device's messages go through the same client, so they
/// stay in order).
///
/// The bench measures the devices, so its own side is cheap per call: every call and its hang-up
/// are encoded before the load starts (a schedule of shuffled rounds over all devices, each call a
/// genuine `call` with its own session id that the device handles in full), and the load loop only
/// publishes them and times the replies.
final class CallLoad: Sendable {
    let devIds: [String]
    let topics: [ResolvedTopics]
    private let senders: [MQTTClient]
    private let receiver: MQTTClient
    private let state = Mutex(State())
    private let clock = ContinuousClock()

    /// The calls in flight and the figures so far.
    struct State {
        var busy = Set<Int>()
        var pending: [String: Pending] = [:]
        var result = LoadResult()

        mutating func error(_ sample: String) {
            result.errors += 1
            if result.errorSamples.count < 20 { result.errorSamples.append(sample) }
        }
    }

    struct Pending {
        var device: Int
        var sentAt: ContinuousClock.Instant
        var hangUp: [UInt8]
        var rang = false
    }

    /// One call of the schedule, encoded ahead.
    struct Planned {
        var device: Int
        var session: String
        var call: [UInt8]
        var hangUp: [UInt8]
    }

    init(broker: MosquittoBroker, loop: MQTTEventLoop, devIds: [String], topics: [ResolvedTopics]) async throws {
        self.devIds = devIds
        self.topics = topics
        var clients: [MQTTClient] = []
        for k in 0..<4 {
            var options = broker.clientOptions(clientID: "bench-caller-\(k)")
            options.maxInflightMessages = 1000
            let c = try MQTTClient(options: options, eventLoop: loop)
            c.connect()
            clients.append(c)
        }
        senders = clients
        var options = broker.clientOptions(clientID: "bench-listener")
        options.maxInflightMessages = 1000
        receiver = try MQTTClient(options: options, eventLoop: loop)
        receiver.setMessageHandler { [weak self] in self?.received($0) }
        try receiver.subscribe("smart/device/out/+", qos: 1)
        receiver.connect()
        for c in senders + [receiver] { _ = await c.waitUntilConnected(timeout: .seconds(10)) }
        try await receiver.subscribeAndWait("smart/device/out/+", qos: 1, timeout: .seconds(10))
    }

    /// Every call of the load, encoded: rounds of all devices in random order. The calls' deadline
    /// lies past the end of the load (the device rings and answers long before).
    func schedule(calls: Int, deadlineMs: Int64) -> [Planned] {
        var rng = SystemRandomNumberGenerator()
        var planned: [Planned] = []
        planned.reserveCapacity(calls)
        var order: [Int] = []
        let t = nowMs() / 1000
        for serial in 0..<calls {
            if order.isEmpty { order = Array(devIds.indices).shuffled(using: &rng).reversed() }
            guard let device = order.popLast() else { break }
            let devId = devIds[device]
            let user = "bench-user-\(device % senders.count)"
            let session = "bench\(serial)x\(device)"
            let call = CallMessage(event: .call, curId: user, targetId: devId, sessionId: session,
                                   timeout: deadlineMs, callType: .oneToOne, extra: CallExtra())
            let hangUp = CallMessage(event: .hangUp, curId: user, targetId: devId, sessionId: session)
            planned.append(Planned(device: device, session: session, call: call.envelope(t: t).encoded(),
                                   hangUp: hangUp.envelope(t: t).encoded()))
        }
        return planned
    }

    func run(rate: Double, seconds: Double) async throws -> LoadResult {
        let total = max(1, Int((rate * seconds).rounded(.up)))
        let plan = schedule(calls: total, deadlineMs: nowMs() + Int64((seconds + 60) * 1000))
        let began = clock.now
        let end = began + .milliseconds(Int64(seconds * 1000))
        var next = 0
        while clock.now < end, next < plan.count {
            let elapsed = BenchCommand.FleetBench.seconds(clock.now - began)
            let target = min(plan.count, Int(elapsed * rate))
            while next < target {
                send(plan[next])
                next += 1
            }
            try? await Task.sleep(for: .milliseconds(1))
        }
        // Drain: every call sent gets up to 5 s to ring and be answered.
        let drainEnd = clock.now + .seconds(5)
        while clock.now < drainEnd, state.withLock({ !$0.pending.isEmpty }) { try? await Task.sleep(for: .milliseconds(10)) }
        for c in senders + [receiver] { c.close() }
        return state.withLock { state in
            var r = state.result
            r.lost = state.pending.count
            if !state.pending.isEmpty { r.errorSamples.append("\(state.pending.count) calls had no ring and answer within 5 s of the end") }
            return r
        }
    }

    private func send(_ call: Planned) {
        // A device still in its previous call (its rounds came round again too soon) is skipped.
        let now = clock.now
        let free = state.withLock { state in
            guard state.busy.insert(call.device).inserted else {
                state.error("device \(devIds[call.device]) still busy")
                return false
            }
            state.pending[call.session] = Pending(device: call.device, sentAt: now, hangUp: call.hangUp)
            state.result.sent += 1
            return true
        }
        if free { publish(call.call, device: call.device) }
    }

    private func publish(_ payload: [UInt8], device: Int) {
        do {
            try senders[device % senders.count].publish(topic: topics[device].in, payload: payload, qos: 1)
        } catch {
            state.withLock { $0.error("publish: \(error)") }
        }
    }

    private func received(_ m: MQTTMessage) {
        let now = clock.now
        guard case .call(let message)? = try? InboundMessage.decode(payload: m.payload).message else { return }
        var hangUp: ([UInt8], Int)?
        state.withLock { state in
            guard var p = state.pending[message.sessionId] else { return }
            let ms = BenchCommand.FleetBench.seconds(now - p.sentAt) * 1000
            switch message.event {
            case .ring:
                p.rang = true
                state.pending[message.sessionId] = p
                state.result.rang += 1
                state.result.callToRing.append(ms)
            case .answer:
                state.result.answered += 1
                state.result.callToAnswer.append(ms)
                state.pending[message.sessionId] = nil
                hangUp = (p.hangUp, p.device)
            default:
                state.error("\(message.event.rawValue) from \(message.curId) reason=\(message.reason ?? "-")")
                state.pending[message.sessionId] = nil
                state.busy.remove(p.device)
            }
        }
        if let (h, device) = hangUp {
            publish(h, device: device)
            _ = state.withLock { $0.busy.remove(device) }
        }
    }

    private func nowMs() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}
