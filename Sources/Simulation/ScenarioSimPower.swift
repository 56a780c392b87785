import CallEngine
import IPCWire

/// Sleep, wake and battery on the simulated device (PROTOCOL.md 8.4), with the device's own
/// `PowerMachine`: its timers are events on the queue; its reports go through the DP store; the
/// wake topic `m/w/{devId}` is a publish the simulated broker delivers a hop later.
extension ScenarioSimulation {
    /// `awake`, `asleep` or `waking`.
    public func powerName(device devId: String) -> String {
        guard let d = deviceIndex[devId] else { return "awake" }
        switch devices[d].power.state {
        case .awake: return "awake"
        case .asleep: return "asleep"
        case .waking: return "waking"
        }
    }

    /// Wakes the device as the control API does.
    public func wake(device devId: String) throws(CallActionError) {
        let d = try device(devId)
        runPower(d, devices[d].power.wakeRequest(now: now))
    }

    /// DP 145 (the control API's battery).
    public func setBattery(device devId: String, percent: Int) throws(CallActionError) {
        let d = try device(devId)
        runPower(d, devices[d].power.setBattery(percent: percent, now: now))
    }

    /// An app publishes the wake payload (the CRC32 of the localKey) on `m/w/{devId}`, and, unless
    /// it last saw DP 149 false, asks for DP 149 (as `AppUser.wake` does). Returns when it published.
    public func publishWake(user userId: String, devId: String) throws(CallActionError) {
        let u = try user(userId)
        guard let d = deviceIndex[devId], users[u].devices.contains(d) else {
            throw .invalidArgument("device '\(devId)' is not known to \(userId)")
        }
        let payload = WakeCheck.payload(localKey: devices[d].localKey)
        queue.push(.wakeTopic(device: d, payload: payload, epoch: devices[d].epoch), at: now &+ Self.hopMs)
        if users[u].dps[devId]?[DataPointCatalogue.awake] != .bool(false) {
            queryDPs(user: u, device: d, ids: [DataPointCatalogue.awake])
        }
    }

    /// The last value of DP `id` that `userId` saw from `devId`, and when (unix ms).
    public func seenDataPoint(user userId: String, devId: String, _ id: DPId) -> (value: DPValue, atMs: Int64)? {
        userIndex[userId].flatMap { users[$0].dpsSeenAt[devId]?[id] }
    }

    /// A payload on the wake topic reached the device (a low-power device subscribes to it).
    func wakeTopicDelivered(_ d: Int, payload: [UInt8], epoch: Int) {
        guard devices[d].connected, devices[d].epoch == epoch, devices[d].power.config.lowPower else { return }
        guard WakeCheck.isWake(payload, localKey: devices[d].localKey) else {
            events.append(.device(devices[d].devId, .refused("ignored a \(payload.count)-byte payload on m/w/\(devices[d].devId): not the CRC32 of the localKey")))
            return
        }
        runPower(d, devices[d].power.wakeRequest(now: now))
    }

    /// 8.4: asleep, the device drops 302, 308, 309, 312, 5 and 31 (a 5 setting DP 149 true wakes
    /// it and is applied once awake); awake, every message is activity. Whether to serve it now.
    func admitWhileAsleep(_ d: Int, _ inbound: InboundMessage) -> Bool {
        var setting: [(key: String, value: JSONValue)]?
        var uid = ""
        if case .dpSet(let set) = inbound {
            setting = set.dps
            uid = set.uid
        }
        let verdict = devices[d].power.receive(protocolNumber: inbound.protocolNumber.rawValue, setting: setting, from: uid, now: now)
        runPower(d, verdict.effects)
        switch verdict.disposition {
        case .serve:
            return true
        case .drop:
            events.append(.device(devices[d].devId,
                                  .refused("dropped a protocol \(inbound.protocolNumber.rawValue) message: the device is asleep")))
            return false
        case .heldForWake:
            return false
        }
    }

    /// The power machine is told how many calls and links are open (no sleep while any is).
    func noteSessionsChanged(_ d: Int) {
        let open = devices[d].links.count + (devices[d].engine.session == nil ? 0 : 1)
        guard open != devices[d].power.openSessions else { return }
        runPower(d, devices[d].power.sessionsChanged(open: open, now: now))
    }

    /// Video streams sent changed (as `Device`: one per link): the battery drains per stream minute.
    func noteStreamsChanged(_ d: Int) {
        runPower(d, devices[d].power.streamsChanged(count: devices[d].links.count, now: now))
    }

    /// Carries out the power machine's effects, in order (as `Device.runPower`).
    func runPower(_ d: Int, _ effects: [PowerEffect]) {
        let devId = devices[d].devId
        for effect in effects {
            switch effect {
            case .armTimer(let timer, let at):
                let token = newToken()
                devices[d].powerTimers[timer] = token
                schedule(.power(device: d, timer, token: token), after: at &- now)
            case .cancelTimer(let timer):
                devices[d].powerTimers.removeValue(forKey: timer)
            case .report(let entries):
                reportDataPoints(d, setting: entries)
            case .reportAll(let setting):
                for entry in setting { _ = try? devices[d].dataPoints?.deviceSet(entry.id, entry.value) }
                publishReport(d, devices[d].dataPoints?.all ?? [])
            case .fellAsleep:
                events.append(.device(devId, .fellAsleep))
            case .wokeUp(let latencyMs):
                events.append(.device(devId, .wokeUp(latencyMs: latencyMs)))
            case .applyHeld(let held):
                for set in held { applyDPSet(d, set.dps, from: set.uid) }
            case .waking, .battery, .lowBattery:
                break
            }
        }
    }

    func powerTimerFired(_ d: Int, _ timer: CallTimer, token: UInt64) {
        guard devices[d].powerTimers[timer] == token else { return }
        devices[d].powerTimers.removeValue(forKey: timer)
        runPower(d, devices[d].power.timerFired(timer, now: now))
    }

    /// An app's protocol 31 to a device.
    func queryDPs(user u: Int, device d: Int, ids: [DPId]) {
        let query = DPQuery(devId: devices[d].devId, uid: users[u].userId, dpIds: ids.isEmpty ? nil : ids)
        publish(query.envelope(t: now / 1000), from: .user(u), topic: .deviceIn(d))
    }

    /// An app's protocol 5 (`setDPs`).
    public func setDPs(user userId: String, devId: String, _ values: [DPId: DPValue]) throws(CallActionError) {
        let u = try user(userId)
        guard let d = deviceIndex[devId], users[u].devices.contains(d) else {
            throw .invalidArgument("device '\(devId)' is not known to \(userId)")
        }
        let set = DPSet(devId: devId, uid: userId, values: values)
        publish(set.envelope(t: now / 1000), from: .user(u), topic: .deviceIn(d))
    }
}
