import CallJournal
import Emulator
import IPCMetrics

/// The doorbell events of PROTOCOL.md 8 in the journal and the metrics.
extension DeviceMonitor {
    /// A doorbell call's 43 and `video_doorbell` messages, wakes (latency) and left messages (path,
    /// duration) as journal entries. DP reports, sleep and snapshots go to /api/events only.
    func journalDoorbell(_ event: DeviceEvent, at now: Int64) async {
        switch event {
        case .receivedDoorbell(let m):
            await journal.record(direction: .in, doorbell: m, kind: doorbellKind ?? "screen_ipc", at: now)
        case .sentDoorbell(let m):
            await journal.record(direction: .out, doorbell: m, kind: doorbellKind ?? "screen_ipc", at: now)
        case .pressed(let callId):
            await journal.record(press: callId, kind: doorbellKind ?? "screen_ipc", at: now)
        case .wokeUp(let latencyMs):
            await journal.record(wokeAfter: latencyMs, at: now)
        case .mediaStored(let name, let path):
            guard MediaKind(name: name) == .video else { return }
            let ref = await media?.ref(name)
            let session = name.hasPrefix("message-") && name.hasSuffix(".mp4")
                ? String(name.dropFirst("message-".count).dropLast(".mp4".count)) : ""
            await journal.record(message: path, session: session, durationSeconds: ref?.durationSeconds, at: now)
        default:
            return
        }
    }
}

extension DeviceRegistry {
    /// What a scrape reads of a device's doorbell counts (PROTOCOL.md 8) and whether it sleeps.
    static func doorbellGauges(of device: Device) async -> ControlMetrics.DoorbellGauges {
        let c = await device.doorbellCounters
        var g = ControlMetrics.DoorbellGauges()
        g.presses = c.presses
        g.pressesIgnored = c.pressesIgnored
        g.wakes = c.wakes
        g.badWakes = c.badWakes
        g.droppedWhileAsleep = c.droppedWhileAsleep
        g.dpRefusals = c.dpRefusals
        g.dpReports = c.dpReports
        g.messages = c.messages
        g.pushFailures = c.pushFailures
        g.streamControlRefusals = c.streamControlRefusals
        if case .asleep = await device.powerState { g.asleep = 1 }
        return g
    }
}
