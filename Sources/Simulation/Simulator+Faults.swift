import CallEngine
import IPCWire

/// Node faults (disconnects with wills, partitions, clock jumps) and the simulated P2P links (they
/// connect after a seeded delay, or never; they break and may come back within the grace).
extension Simulator {
    func scheduleFaults() {
        let nodes = Double(config.devices + config.users)
        let hour = 3_600_000.0
        if config.faults.contains(.disconnect) {
            schedule(.fault(.disconnect(.device(0))), after: rng.exponential(meanMs: hour / (Rates.disconnectsPerHour * nodes)))
        }
        if config.faults.contains(.partition) {
            let rate = max(0.5, Rates.partitionsPerHourPer1000 * nodes / 1000)
            schedule(.fault(.partitionStart), after: rng.exponential(meanMs: hour / rate))
        }
        if config.faults.contains(.clockJump) {
            schedule(.fault(.clockJump(.device(0))), after: rng.exponential(meanMs: hour / (Rates.clockJumpsPerHour * nodes)))
        }
    }

    private func randomNode() -> NodeRef {
        let n = rng.below(config.devices + config.users)
        return n < config.devices ? .device(n) : .user(n - config.devices)
    }

    func injectFault(_ fault: FaultEvent) {
        let hour = 3_600_000.0
        let nodes = Double(config.devices + config.users)
        switch fault {
        case .disconnect:
            guard !workloadDone else { return }
            let node = randomNode()
            if drop(node, will: true) {
                report.faults.disconnects += 1
                schedule(.fault(.reconnect(node, epoch: connection(node).epoch)), after: min(60_000, rng.exponential(meanMs: 5000)))
            }
            schedule(.fault(.disconnect(node)), after: rng.exponential(meanMs: hour / (Rates.disconnectsPerHour * nodes)))
        case .reconnect(let node, let epoch):
            guard connection(node).epoch == epoch else { return }
            note("\(node) reconnects")
            updateConnection(node) { $0.connected = true }
        case .partitionStart:
            guard !workloadDone else { return }
            let size = max(1, min(50, (config.devices + config.users) / 100))
            var members: [NodeRef] = []
            for _ in 0..<size {
                let node = randomNode()
                if drop(node, will: false) { members.append(node) }
            }
            let id = nextPartition
            nextPartition += 1
            partitions[id] = members
            report.faults.partitions += 1
            let length = min(120_000, rng.exponential(meanMs: 20_000))
            // The broker notices after 1.5 keep-alives (30 s) and publishes the wills.
            if length > 45_000 { report.faults.wills += members.filter { if case .device = $0 { true } else { false } }.count }
            schedule(.fault(.partitionEnd(id: id)), after: length)
            let rate = max(0.5, Rates.partitionsPerHourPer1000 * nodes / 1000)
            schedule(.fault(.partitionStart), after: rng.exponential(meanMs: hour / rate))
        case .partitionEnd(let id):
            for node in partitions.removeValue(forKey: id) ?? [] {
                updateConnection(node) { $0.connected = true }
            }
        case .clockJump:
            guard !workloadDone else { return }
            let node = randomNode()
            let jump = rng.int(1000, 120_000) * (rng.chance(0.5) ? 1 : -1)
            updateConnection(node) { $0.clockOffsetMs = jump }
            markOpenSessionsFaulted(node)
            report.faults.clockJumps += 1
            note("\(node) clock jumps \(jump) ms")
            schedule(.fault(.clockHeal(node)), after: rng.exponential(meanMs: 60_000))
            schedule(.fault(.clockJump(node)), after: rng.exponential(meanMs: hour / (Rates.clockJumpsPerHour * nodes)))
        case .clockHeal(let node):
            markOpenSessionsFaulted(node)
            updateConnection(node) { $0.clockOffsetMs = 0 }
        }
    }

    /// Drops `node`'s connection (clean session: what is in flight to it is lost). False when it
    /// was already away.
    private func drop(_ node: NodeRef, will: Bool) -> Bool {
        guard isConnected(node) else { return false }
        updateConnection(node) {
            $0.connected = false
            $0.epoch += 1
        }
        markOpenSessionsFaulted(node)
        if will, case .device = node { report.faults.wills += 1 }
        note("\(node) drops its connection")
        return true
    }

    private func markOpenSessionsFaulted(_ node: NodeRef) {
        switch node {
        case .device(let d):
            if let s = devices[d].open { ledger.markFaulted(s) }
        case .user(let u):
            if let s = users[u].openCall { ledger.markFaulted(s) }
            if let s = users[u].openBell { ledger.markFaulted(s) }
        case .hostile:
            break
        }
    }

    // MARK: Links

    func linkUp(device d: Int, session: String, generation: UInt64) {
        guard let i = devices[d].links.firstIndex(where: { $0.session == session && $0.generation == generation }),
              !devices[d].links[i].up else { return }
        devices[d].links[i].up = true
        let link = devices[d].links[i]
        note("d\(d) link \(session) up with \(link.peer)")
        let answered = devices[d].engine.answeredCall
        if answered?.sessionId != session || answered?.peer != link.peer {
            violation("link-owner", "d\(d) link of \(session) came up for \(link.peer); answered: \(answered.map { "\($0.sessionId) by \($0.peer)" } ?? "none")")
        }
        feedDevice(d, .mediaLinkUp(sessionId: session))
        if let slot = users[link.user].links.first(where: { $0.session == session && $0.device == d })?.slot {
            feedUser(link.user, slot, .mediaLinkUp(sessionId: session))
        }
        if rng.chance(Rates.linkBreakChance) {
            schedule(.linkDown(device: d, session: session, generation: generation), after: rng.exponential(meanMs: 20_000))
        }
    }

    func linkDown(device d: Int, session: String, generation: UInt64) {
        guard let i = devices[d].links.firstIndex(where: { $0.session == session && $0.generation == generation }),
              devices[d].links[i].up else { return }
        devices[d].links[i].up = false
        let link = devices[d].links[i]
        report.faults.linkBreaks += 1
        ledger.markFaulted(session)
        note("d\(d) link \(session) lost")
        feedDevice(d, .mediaLinkDown(sessionId: session))
        if let slot = users[link.user].links.first(where: { $0.session == session && $0.device == d })?.slot {
            feedUser(link.user, slot, .mediaLinkDown(sessionId: session))
        }
        if rng.chance(Rates.linkRecoverChance) {
            report.faults.linkRecoveries += 1
            schedule(.linkUp(device: d, session: session, generation: generation), after: rng.int(500, 4000))
        }
    }
}
