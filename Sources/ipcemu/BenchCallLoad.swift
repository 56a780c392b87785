import DeviceProfile
import Foundation
import IPCWire
import MQTTTransport

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
final class CallLoad: @unchecked Sendable {
    let devIds: [String]
    let topics: [ResolvedTopics]
    private let senders: [MQTTClient]
    private let receiver: MQTTClient
    private let lock = NSLock()
    private var busy = Set<Int>()
    private var pending: [String: Pending] = [:]
    private var result = LoadResult()
    private let clock = ContinuousClock()
    private let byDevId: [String: Int]

    struct Pending {
        var device: Int
        var sentAt: ContinuousClock.Instant
        var rang = false
    }

    init(broker: MosquittoBroker, loop: MQTTEventLoop, devIds: [String], topics: [ResolvedTopics]) async throws {
        self.devIds = devIds
        self.topics = topics
        var index: [String: Int] = [:]
        for (i, id) in devIds.enumerated() { index[id] = i }
        byDevId = index
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

    func run(rate: Double, seconds: Double) async throws -> LoadResult {
        let began = clock.now
        let end = began + .milliseconds(Int64(seconds * 1000))
        var due = 0.0
        var serial = 0
        var rng = SystemRandomNumberGenerator()
        while clock.now < end {
            let elapsed = BenchCommand.FleetBench.seconds(clock.now - began)
            let target = Int(elapsed * rate)
            while Double(serial) < Double(target) + due {
                serial += 1
                call(serial: serial, using: &rng)
            }
            due = 0
            try? await Task.sleep(for: .milliseconds(2))
        }
        // Drain: every call sent gets up to 5 s to ring and be answered.
        let drainEnd = clock.now + .seconds(5)
        while clock.now < drainEnd, lock.withLock({ !pending.isEmpty }) { try? await Task.sleep(for: .milliseconds(10)) }
        for c in senders + [receiver] { c.close() }
        return lock.withLock {
            var r = result
            r.lost = pending.count
            if !pending.isEmpty { r.errorSamples.append("\(pending.count) calls had no ring and answer within 5 s of the end") }
            return r
        }
    }

    private func call(serial: Int, using rng: inout SystemRandomNumberGenerator) {
        // A random idle device (a few tries; a nearly-full fleet just skips this tick's call).
        var chosen: Int?
        lock.withLock {
            for _ in 0..<8 {
                let i = Int.random(in: 0..<devIds.count, using: &rng)
                if !busy.contains(i) { chosen = i; busy.insert(i); break }
            }
        }
        guard let device = chosen else {
            lock.withLock { result.errors += 1; if result.errorSamples.count < 20 { result.errorSamples.append("no idle device found") } }
            return
        }
        let devId = devIds[device]
        let user = "bench-user-\(device % senders.count)"
        let session = "bench\(serial)x\(device)"
        let message = CallMessage(event: .call, curId: user, targetId: devId, sessionId: session,
                                  timeout: nowMs() + 30_000, callType: .oneToOne, extra: CallExtra())
        lock.withLock {
            pending[session] = Pending(device: device, sentAt: clock.now)
            result.sent += 1
        }
        publish(message, device: device)
    }

    private func publish(_ message: CallMessage, device: Int) {
        let payload = message.envelope(t: nowMs() / 1000).encoded()
        do {
            try senders[device % senders.count].publish(topic: topics[device].in, payload: payload, qos: 1)
        } catch {
            lock.withLock { result.errors += 1; if result.errorSamples.count < 20 { result.errorSamples.append("publish: \(error)") } }
        }
    }

    private func received(_ m: MQTTMessage) {
        let now = clock.now
        guard case .call(let message)? = try? InboundMessage.decode(payload: m.payload).message else { return }
        var hangUp: (CallMessage, Int)?
        lock.withLock {
            guard var p = pending[message.sessionId] else { return }
            let ms = BenchCommand.FleetBench.seconds(now - p.sentAt) * 1000
            switch message.event {
            case .ring:
                p.rang = true
                pending[message.sessionId] = p
                result.rang += 1
                result.callToRing.append(ms)
            case .answer:
                result.answered += 1
                result.callToAnswer.append(ms)
                pending[message.sessionId] = nil
                hangUp = (CallMessage(event: .hangUp, curId: message.targetId, targetId: message.curId,
                                      sessionId: message.sessionId), p.device)
            default:
                result.errors += 1
                if result.errorSamples.count < 20 {
                    result.errorSamples.append("\(message.event.rawValue) from \(message.curId) reason=\(message.reason ?? "-")")
                }
                pending[message.sessionId] = nil
                busy.remove(p.device)
            }
        }
        if let (h, device) = hangUp {
            publish(h, device: device)
            _ = lock.withLock { busy.remove(device) }
        }
    }

    private func nowMs() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}
