import CallEngine
import CallRuntime
import IPCWire

/// The device's data points on the wire (PROTOCOL.md 8.3): protocol 4 reports of exactly what
/// changed, protocol 5 sets (refusals reported back), protocol 31 queries. The typed store
/// (`DataPointStore`) decides; this publishes.
extension Device {
    /// The device's DPs and their values now.
    public var dataPointValues: [DPEntry] { dataPoints.all }

    /// Writes the device's own DP changes into the store and reports them as one protocol 4
    /// message (8.3: exactly what changed; a DP the device lacks is left out).
    func reportDataPoints(setting changes: [DPEntry]) {
        var changed: [DPEntry] = []
        for entry in changes {
            do {
                if try dataPoints.deviceSet(entry.id, entry.value) { changed.append(entry) }
            } catch {
                log.log(.debug, "DP not reported", device: devId, fields: [("dp", String(entry.id)), ("why", "\(error)")])
            }
        }
        publishReport(changed)
    }

    /// PROTOCOL.md 8.3: "On connect and on waking the device reports all its DPs once."
    func reportAllDataPoints() { publishReport(dataPoints.all) }

    /// One protocol 4 message with `entries` (nothing when empty). On the cloud, DPs the product's
    /// schema lacks are left out, each warned about once.
    func publishReport(_ all: [DPEntry]) {
        var entries = all
        if let schema = cloud?.schemaDataPoints {
            entries = all.filter { schema.contains($0.id) }
            for entry in all where !schema.contains(entry.id) && warnedOutsideSchema.insert(entry.id).inserted {
                log.log(.warning, "DP \(entry.id) is in the profile but not in the product's schema on the cloud: never reported",
                        device: devId)
            }
        }
        guard !entries.isEmpty else { return }
        let t = clock.nowSeconds()
        doorbellCounters.dpReports += 1
        log.log(.debug, "-> 4 report", device: devId, fields: [("dps", entries.map { "\($0.id)=\($0.value)" }.joined(separator: ","))])
        publish(DPReport(devId: devId, dps: entries, t: t).envelope(t: t), what: "4 report")
        emit(.dataPointsReported(entries))
    }

    /// The device itself changes DPs (the control API, a scenario): applied as the device's own
    /// changes (any access), reported. Throws for a DP the device lacks or a value of the wrong
    /// type, changing nothing.
    public func setDataPoints(_ values: [DPId: DPValue]) throws(DataPointStoreError) {
        var probe = dataPoints
        for (id, value) in values.sorted(by: { $0.key < $1.key }) { try probe.deviceSet(id, value) }
        reportDataPoints(setting: values.sorted(by: { $0.key < $1.key }).map { DPEntry(id: $0.key, value: $0.value) })
    }

    /// PROTOCOL.md 8.3: a protocol 5 from an app. Applied by the store; the device reports every
    /// DP the message set (changed or not), refused DPs with their current value, plus what
    /// changed as a result; unknown ids are counted and not reported. DP 149 true wakes (8.4).
    func receiveDPSet(_ set: DPSet) {
        guard set.devId == devId else {
            refuse("dropped a protocol 5 for '\(set.devId)', not this device", kind: .notForUs)
            return
        }
        apply(set.dps, from: set.uid)
    }

    func apply(_ dps: [(key: String, value: JSONValue)], from uid: String) {
        let outcome = dataPoints.applySet(dps, from: uid)
        log.log(.info, "<- 5 set", device: devId, fields: [("from", uid), ("applied", outcome.applied.map(String.init).joined(separator: ","))])
        let refusedCount = outcome.refusals.count + outcome.unknownKeys.count
        if refusedCount > 0 {
            doorbellCounters.dpRefusals += refusedCount
            let why = (outcome.refusals.map(\.description) + outcome.unknownKeys.map { "DP '\($0)' is not on this device" })
                .joined(separator: "; ")
            refuse("protocol 5 from '\(uid)': \(why)", kind: .dataPoint)
        }
        if outcome.changed.contains(DataPointCatalogue.lowBatteryThreshold),
           case .int(let threshold)? = dataPoints.value(DataPointCatalogue.lowBatteryThreshold) {
            power.lowBatteryThresholdChanged(to: Int(clamping: threshold))
        }
        // A set that applied nothing: its report only answers a refusal (PROTOCOL.md 3.4's limits).
        if !outcome.applied.isEmpty || refusedCount == 0 || admitRefusalReply(to: uid) {
            publishReport(outcome.report)
        }
        if outcome.wakeRequested { runPower(power.wakeRequest(now: clock.nowMs())) }
    }

    /// PROTOCOL.md 8.3: a protocol 31 asks for the listed DPs (all when absent or empty).
    func receiveDPQuery(_ query: DPQuery) {
        guard query.devId == devId else {
            refuse("dropped a protocol 31 for '\(query.devId)', not this device", kind: .notForUs)
            return
        }
        log.log(.info, "<- 31 query", device: devId, fields: [("from", query.uid)])
        publishReport(dataPoints.report(ids: query.dpIds ?? []))
    }
}
