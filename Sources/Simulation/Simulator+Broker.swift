import CallEngine
import IPCWire

/// The simulated broker (PROTOCOL.md 1): QoS 1, clean sessions, the in topic of each device (its
/// one subscriber) and its out topic (every household app). Faults act here: loss, QoS 1
/// duplicates, reordering, delay spikes; a subscriber that is away misses what comes meanwhile.
enum Topic {
    case deviceIn(Int)
    case deviceOut(Int)
}

extension Simulator {
    /// Encodes `envelope` with the real codec and publishes it.
    func publish(_ envelope: Envelope, from sender: NodeRef, topic: Topic, session: String, hostile: Bool = false) {
        publish(bytes: envelope.encoded(), from: sender, topic: topic, session: session, hostile: hostile)
    }

    func publish(bytes: [UInt8], from sender: NodeRef, topic: Topic, session: String, hostile: Bool = false) {
        if !isConnected(sender) {
            // libmosquitto refuses a publish while disconnected; the glue logs it and goes on.
            report.faults.lostWhileAway += 1
            ledger.markFaulted(session)
            return
        }
        report.published += 1
        let packet = SimPacket(bytes: bytes, from: sender, session: session, hostile: hostile)
        switch topic {
        case .deviceIn(let d):
            route(packet, to: .device(d))
        case .deviceOut(let d):
            for user in devices[d].household { route(packet, to: .user(user)) }
        }
    }

    private func route(_ packet: SimPacket, to receiver: NodeRef) {
        let faults = config.faults
        if isSkewed(packet.from) || isSkewed(receiver) { ledger.markFaulted(packet.session) }
        if faults.contains(.loss), rng.chance(Rates.lossChance) {
            report.faults.lost += 1
            ledger.markFaulted(packet.session)
            note("lost \(packet.from)->\(receiver) \(packet.session)")
            return
        }
        var delay = rng.int(Rates.baseDelayMinMs, Rates.baseDelayMaxMs)
        if faults.contains(.delay), rng.chance(Rates.delaySpikeChance) {
            delay += min(10_000, rng.exponential(meanMs: 1500))
            report.faults.delayed += 1
            ledger.markFaulted(packet.session)
        }
        var at = now &+ delay
        let key = Int64(nodeKey(packet.from)) << 32 | Int64(nodeKey(receiver))
        if faults.contains(.reorder), rng.chance(Rates.reorderChance) {
            // Held back past later messages of the same publisher (MQTT would keep the order).
            at &+= rng.int(50, 3000)
            report.faults.reordered += 1
            ledger.markFaulted(packet.session)
        } else {
            at = max(at, lastDelivery[key] ?? at)
            lastDelivery[key] = at
        }
        let epoch = connection(receiver).epoch
        queue.push(.deliver(packet, to: receiver, epoch: epoch), at: at)
        if faults.contains(.dup), rng.chance(Rates.dupChance) {
            // QoS 1: the PUBACK was lost; the broker sends it again.
            queue.push(.deliver(packet, to: receiver, epoch: epoch), at: at &+ rng.int(5, 2000))
            report.faults.duplicated += 1
            ledger.markFaulted(packet.session)
        }
    }

    func deliver(_ packet: SimPacket, to receiver: NodeRef, epoch: Int) {
        let conn = connection(receiver)
        guard conn.connected, conn.epoch == epoch else {
            // Clean session: what was in flight when the connection went is lost.
            report.faults.lostWhileAway += 1
            ledger.markFaulted(packet.session)
            return
        }
        report.delivered += 1
        hash.add(Int64(nodeKey(receiver)))
        switch receiver {
        case .device(let d): deviceReceives(d, packet)
        case .user(let u): userReceives(u, packet)
        case .hostile: break
        }
    }

    func nodeKey(_ node: NodeRef) -> Int {
        switch node {
        case .device(let i): i
        case .user(let i): config.devices + i
        case .hostile(let i): config.devices + config.users + i
        }
    }

    func connection(_ node: NodeRef) -> Connection {
        switch node {
        case .device(let i): devices[i].connection
        case .user(let i): users[i].connection
        case .hostile: Connection()
        }
    }

    func isConnected(_ node: NodeRef) -> Bool { connection(node).connected }

    func isSkewed(_ node: NodeRef) -> Bool { connection(node).clockOffsetMs != 0 }

    func updateConnection(_ node: NodeRef, _ change: (inout Connection) -> Void) {
        switch node {
        case .device(let i): change(&devices[i].connection)
        case .user(let i): change(&users[i].connection)
        case .hostile: break
        }
    }
}
