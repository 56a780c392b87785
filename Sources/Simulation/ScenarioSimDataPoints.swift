import CallEngine
import IPCWire

/// The names and DP values of the simulated camera media (PROTOCOL.md 8.5), given by the world
/// (the device's own writers: `DeviceMediaStore`'s names and paths, `DoorbellMediaDPs`' values),
/// and how long the simulated camera takes. No file is written: a snapshot "is taken" a fixed
/// `snapshotMs` after the press, a message "is written" `messageWriteMs` after its last second.
public struct ScenarioSimMedia: Sendable {
    public var snapshotMs: Int64
    public var messageWriteMs: Int64
    /// The file name of a press snapshot (by call id), a motion snapshot (by unix s), a message (by call id).
    public var pressSnapshotName: @Sendable (String) -> String
    public var motionSnapshotName: @Sendable (Int64) -> String
    public var messageName: @Sendable (String) -> String
    /// The control API path a name is served at (what the DPs carry).
    public var path: @Sendable (String) -> String
    /// DP 154 / 115's value for a snapshot path, and DP 185's.
    public var snapshotReference: @Sendable (String) -> String
    public var doorbellAlarm: @Sendable (String) -> String

    public init(snapshotMs: Int64 = 200, messageWriteMs: Int64 = 300,
                pressSnapshotName: @escaping @Sendable (String) -> String,
                motionSnapshotName: @escaping @Sendable (Int64) -> String,
                messageName: @escaping @Sendable (String) -> String,
                path: @escaping @Sendable (String) -> String,
                snapshotReference: @escaping @Sendable (String) -> String,
                doorbellAlarm: @escaping @Sendable (String) -> String) {
        self.snapshotMs = snapshotMs
        self.messageWriteMs = messageWriteMs
        self.pressSnapshotName = pressSnapshotName
        self.motionSnapshotName = motionSnapshotName
        self.messageName = messageName
        self.path = path
        self.snapshotReference = snapshotReference
        self.doorbellAlarm = doorbellAlarm
    }
}

/// A simulated camera job that completes later (a snapshot taken, a message written).
enum ScenarioSimMediaJob {
    case pressSnapshot(callId: String, unixSeconds: Int64)
    case motionSnapshot(unixSeconds: Int64)
    case message(callId: String)
}

/// Data points on the simulated device (PROTOCOL.md 8.3), as `Device` does them with the same
/// typed store (`DataPointStore`): protocol 4 reports of what changed, protocol 5 sets (refusals
/// reported back), protocol 31 queries; the press's DPs and the media DPs of 8.5.
extension ScenarioSimulation {
    /// The device's DP `id` now (nil when it lacks it).
    public func dataPoint(device devId: String, _ id: DPId) -> DPValue? {
        deviceIndex[devId].flatMap { devices[$0].dataPoints?.value(id) }
    }

    /// The device changes its own DPs (a scenario's `dps`): applied whatever their access, reported.
    public func setDataPoints(device devId: String, _ values: [DPId: DPValue]) throws(CallActionError) {
        let d = try device(devId)
        guard var probe = devices[d].dataPoints else { throw .invalidArgument("device '\(devId)' has no data points") }
        let entries = values.sorted { $0.key < $1.key }.map { DPEntry(id: $0.key, value: $0.value) }
        for e in entries {
            do throws(DataPointStoreError) { try probe.deviceSet(e.id, e.value) } catch { throw .invalidArgument("\(error)") }
        }
        reportDataPoints(d, setting: entries)
    }

    /// A motion event (8.5): activity, then a snapshot (DP 115) and DP 212 `ipc_motion`.
    public func motion(device devId: String) throws(CallActionError) {
        let d = try device(devId)
        runPower(d, devices[d].power.activity(now: now))
        scheduleMedia(d, .motionSnapshot(unixSeconds: now / 1000))
    }

    /// Writes the device's own changes into the store and reports what changed (one protocol 4).
    func reportDataPoints(_ d: Int, setting changes: [DPEntry]) {
        var changed: [DPEntry] = []
        for entry in changes {
            if (try? devices[d].dataPoints?.deviceSet(entry.id, entry.value)) == true { changed.append(entry) }
        }
        publishReport(d, changed)
    }

    /// One protocol 4 message with `entries` (nothing when empty).
    func publishReport(_ d: Int, _ entries: [DPEntry]) {
        guard !entries.isEmpty else { return }
        let report = DPReport(devId: devices[d].devId, dps: entries, t: now / 1000)
        publish(report.envelope(t: now / 1000), from: .device(d), topic: .deviceOut(d))
        events.append(.device(devices[d].devId, .dataPointsReported(entries)))
    }

    /// A protocol 5 from an app (8.3), as `Device.apply` does it.
    func applyDPSet(_ d: Int, _ dps: [(key: String, value: JSONValue)], from uid: String) {
        // A device without DPs has none of the ids: nothing applied, nothing reported (8.3).
        var outcome = DPSetOutcome(uid: uid)
        if let applied = devices[d].dataPoints?.applySet(dps, from: uid) { outcome = applied } else { outcome.unknownKeys = dps.map(\.key) }
        let refused = outcome.refusals.count + outcome.unknownKeys.count
        if refused > 0 {
            let why = (outcome.refusals.map(\.description) + outcome.unknownKeys.map { "DP '\($0)' is not on this device" })
                .joined(separator: "; ")
            events.append(.device(devices[d].devId, .refused("protocol 5 from '\(uid)': \(why)")))
        }
        if outcome.changed.contains(DataPointCatalogue.lowBatteryThreshold),
           case .int(let threshold)? = devices[d].dataPoints?.value(DataPointCatalogue.lowBatteryThreshold) {
            devices[d].power.lowBatteryThresholdChanged(to: Int(clamping: threshold))
        }
        // A set that applied nothing: its report only answers a refusal (PROTOCOL.md 3.4's limits).
        if !outcome.applied.isEmpty || refused == 0 || admitRefusalReply(d, to: uid) {
            publishReport(d, outcome.report)
        }
        if outcome.wakeRequested { runPower(d, devices[d].power.wakeRequest(now: now)) }
    }

    private func admitRefusalReply(_ d: Int, to uid: String) -> Bool {
        if case .send = devices[d].limiter.admit(replyTo: uid, now: now) { return true }
        return false
    }

    // MARK: Camera media (8.5), simulated: names and DPs, no file

    func scheduleMedia(_ d: Int, _ job: ScenarioSimMediaJob) {
        let media = devices[d].media
        let ms: Int64
        switch job {
        case .pressSnapshot, .motionSnapshot: ms = media?.snapshotMs ?? 0
        case .message: ms = Int64(devices[d].messageSeconds) * 1000 + (media?.messageWriteMs ?? 0)
        }
        schedule(.media(device: d, job), after: ms)
    }

    /// A camera job is done: the DPs that name its file, as the device reports them once written.
    func mediaDone(_ d: Int, _ job: ScenarioSimMediaJob) {
        let devId = devices[d].devId
        let media = devices[d].media
        let t = now / 1000
        switch job {
        case .pressSnapshot(let callId, let pressedAt):
            var changes = [DPEntry(id: DataPointCatalogue.doorbellActive, value: .string(String(pressedAt)))]
            if let media {
                let name = media.pressSnapshotName(callId)
                let path = media.path(name)
                devices[d].pressSnapshots[callId] = path
                if devices[d].pressSnapshots.count > 8, let oldest = devices[d].pressOrder.first {
                    devices[d].pressSnapshots.removeValue(forKey: oldest)
                    devices[d].pressOrder.removeFirst()
                }
                devices[d].pressOrder.append(callId)
                events.append(.device(devId, .mediaStored(name: name, path: path)))
                changes.append(DPEntry(id: DataPointCatalogue.doorbellPicture, value: .string(media.snapshotReference(path))))
                changes.append(DPEntry(id: DataPointCatalogue.alarmMessage, value: .string(media.doorbellAlarm(path))))
            }
            reportDataPoints(d, setting: changes)
        case .motionSnapshot(let at):
            var changes: [DPEntry] = []
            var files: [String] = []
            if let media {
                let name = media.motionSnapshotName(at)
                let path = media.path(name)
                files = [path]
                events.append(.device(devId, .mediaStored(name: name, path: path)))
                changes.append(DPEntry(id: DataPointCatalogue.motionPicture, value: .string(media.snapshotReference(path))))
            }
            changes.append(DPEntry(id: DataPointCatalogue.initiativeMessage,
                                   value: DPAlert.initiative(cmd: .motion, type: files.isEmpty ? .none : .image, files: files, t: at)))
            reportDataPoints(d, setting: changes)
        case .message(let callId):
            guard let media else { return }  // no camera: the message could not be recorded
            let name = media.messageName(callId)
            let path = media.path(name)
            events.append(.device(devId, .mediaStored(name: name, path: path)))
            let value = DPAlert.initiative(cmd: .leaveMessage, type: .video, files: [path], t: t,
                                           extra: ["duration": .int(Int64(devices[d].messageSeconds))])
            reportDataPoints(d, setting: [DPEntry(id: DataPointCatalogue.initiativeMessage, value: value)])
        }
    }

    /// 8.5: "No accept within doorbell.ringTimeout: the device sends timeout and reports DP 212
    /// ipc_doorbell ("type":"image", the press snapshot's path)."
    func reportRingTimeout(_ d: Int, callId: String) {
        let files = devices[d].pressSnapshots[callId].map { [$0] } ?? []
        let value = DPAlert.initiative(cmd: .doorbell, type: files.isEmpty ? .none : .image, files: files, t: now / 1000)
        reportDataPoints(d, setting: [DPEntry(id: DataPointCatalogue.initiativeMessage, value: value)])
    }
}

