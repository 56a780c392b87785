import CallEngine
import CallRuntime
import DeviceProfile
import Foundation
import IPCWire

/// The doorbell kinds of PROTOCOL.md 8 on the device: presses announced over protocol 43 with
/// their DPs, snapshot and pushes (8.1, 8.5, 8.8), the household's `video_doorbell` answers
/// (8.2, through the doorbell machine), ring timeouts and left messages (8.5).
extension Device {
    /// The doorbell kind of this device's profile (`screen_ipc` places §3 calls).
    public nonisolated var doorbellKind: DeviceProfile.Doorbell.Kind { template.profile.doorbell.kind }

    /// Presses the doorbell of an `ac_doorbell` or `doorbell` device (PROTOCOL.md 8.1): wakes it
    /// at once (8.4), then announces a call to the household; returns the call id. Inside a
    /// message window (8.5) the press records a message instead (the id returned is the missed
    /// call's). A press while a doorbell call is ringing or connected is counted and ignored: it
    /// throws `onCalling`.
    @discardableResult
    public func pressDoorbell(ringTimeoutSeconds: Double? = nil) throws(CallActionError) -> String {
        let now = clock.nowMs()
        runPower(power.press(now: now))
        let callId = makeDoorbellCallId(unixSeconds: clock.nowSeconds(), using: &random)
        let press = DoorbellPress(sessionId: callId, timeoutMs: ringTimeoutSeconds.map(WallClock.milliseconds(seconds:)))
        let effects: [CallEffect]
        do {
            effects = try host.perform(.press(press), fire: timerFire)
        } catch {
            if case .onCalling = error {
                doorbellCounters.pressesIgnored += 1
                log.log(.info, "press ignored: a doorbell call is on", device: devId, fields: [("why", "\(error)")])
            }
            throw error
        }
        var id = callId
        for case .leaveMessage(let missed) in effects { id = missed }
        doorbellCounters.presses += 1
        run(effects)
        return id
    }

    /// A `video_doorbell` message arrived (PROTOCOL.md 8.2): the doorbell machine decides (a
    /// `screen_ipc` device answers it with `stop` `invalid_params`).
    func receiveDoorbell(_ message: VideoDoorbellMessage) {
        let effects = host.handle(.receivedDoorbell(message), fire: timerFire)
        let refused = effects.contains {
            switch $0 {
            case .refusedDoorbell, .refused: true
            default: false
            }
        }
        log.log(refused ? .debug : .info, "<- video_doorbell \(message.event.rawValue)", device: devId,
                fields: [("call", message.eData), ("user", message.uid ?? "")])
        emit(.receivedDoorbell(message))
        run(limitRefusalReplies(effects), quiet: refused)
    }

    /// PROTOCOL.md 8.1: "Device -> out topic, once per press ... Right after it the device reports
    /// DP 136 (the press time), DP 154 and DP 185 (the press snapshot) in one protocol 4 message";
    /// 8.8: the pushes of the press.
    func announcePress(callId: String) {
        let t = clock.nowSeconds()
        let press = DoorbellPressMessage(devId: devId, etype: template.profile.doorbell.kind.rawValue, edata: callId)
        log.log(.info, "-> 43 doorbell press", device: devId, fields: [("call", callId)])
        publish(press.envelope(t: t), what: "43 press")
        emit(.pressed(callId: callId))
        if let pushes {
            let push = PushPress(devId: devId, callId: callId, kind: template.profile.doorbell.kind.rawValue,
                                 timestampMs: clock.nowMs(), deviceName: profile.identity.name)
            let users = template.profile.behaviour.household
            Task { [weak self] in
                let outcome = await pushes.send(press: push, users: users)
                await self?.notePushes(outcome)
            }
        }
        let media = self.mediaStore
        let profile = self.profile
        let feeds = self.feeds
        Task { [weak self] in
            let snapshot = await media.takePressSnapshot(callId: callId, profile: profile, feeds: feeds)
            await self?.reportPress(callId: callId, unixSeconds: t, snapshot: snapshot)
        }
    }

    /// The press's one protocol 4 report: DP 136, and DPs 154 and 185 when the snapshot was taken.
    private func reportPress(callId: String, unixSeconds t: Int64, snapshot: MediaRef?) {
        rememberPressSnapshot(callId: callId, snapshot)
        var changes: [DPEntry] = [DPEntry(id: DataPointCatalogue.doorbellActive, value: .string(String(t)))]
        if let snapshot {
            emit(.mediaStored(name: snapshot.name, path: snapshot.path))
            changes.append(DPEntry(id: DataPointCatalogue.doorbellPicture, value: .string(DoorbellMediaDPs.snapshotReference(snapshot))))
            changes.append(DPEntry(id: DataPointCatalogue.alarmMessage, value: .string(DoorbellMediaDPs.doorbellAlarm(snapshot))))
        }
        reportDataPoints(setting: changes)
    }

    private func rememberPressSnapshot(callId: String, _ ref: MediaRef?) {
        pressSnapshots.append((callId, ref))
        if pressSnapshots.count > 8 { pressSnapshots.removeFirst(pressSnapshots.count - 8) }
    }

    /// PROTOCOL.md 8.5: "No accept within doorbell.ringTimeout: the device sends timeout and reports
    /// DP 212 ipc_doorbell ("type":"image", the press snapshot's path)."
    func reportRingTimeout(callId: String) {
        let snapshot = pressSnapshots.last(where: { $0.callId == callId })?.ref
        let value = DoorbellMediaDPs.doorbellTimeout(snapshot: snapshot, t: clock.nowSeconds())
        reportDataPoints(setting: [DPEntry(id: DataPointCatalogue.initiativeMessage, value: .string(value))])
    }

    /// PROTOCOL.md 8.5: a press inside the message window records `doorbell.messageSeconds` of the
    /// camera into an MP4; once written the device reports DP 212 `ipc_leave_msg`.
    func leaveMessage(callId: String) {
        log.log(.info, "recording a left message", device: devId,
                fields: [("call", callId), ("seconds", String(profile.doorbell.messageSeconds))])
        let media = self.mediaStore
        let profile = self.profile
        let feeds = self.feeds
        Task { [weak self] in
            let message = await media.recordMessage(callId: callId, seconds: profile.doorbell.messageSeconds,
                                                    profile: profile, feeds: feeds)
            await self?.messageRecorded(callId: callId, message)
        }
    }

    private func messageRecorded(callId: String, _ message: MediaRef?) {
        guard let message else {
            log.log(.warning, "the left message could not be recorded", device: devId, fields: [("call", callId)])
            return
        }
        doorbellCounters.messages += 1
        log.log(.info, "left message recorded", device: devId,
                fields: [("call", callId), ("path", message.path), ("bytes", String(message.bytes))])
        emit(.mediaStored(name: message.name, path: message.path))
        let value = DoorbellMediaDPs.leftMessage(message, t: clock.nowSeconds())
        reportDataPoints(setting: [DPEntry(id: DataPointCatalogue.initiativeMessage, value: .string(value))])
    }

    /// PROTOCOL.md 8.5: a motion event from the control API: a snapshot, DP 115, and DP 212
    /// `ipc_motion`. Returns the snapshot (nil when it could not be taken).
    @discardableResult
    public func motion() async -> MediaRef? {
        let t = clock.nowSeconds()
        runPower(power.activity(now: clock.nowMs()))
        let snapshot = await mediaStore.takeMotionSnapshot(unixSeconds: t, profile: profile, feeds: feeds)
        var changes: [DPEntry] = []
        if let snapshot {
            emit(.mediaStored(name: snapshot.name, path: snapshot.path))
            changes.append(DPEntry(id: DataPointCatalogue.motionPicture, value: .string(DoorbellMediaDPs.snapshotReference(snapshot))))
        }
        changes.append(DPEntry(id: DataPointCatalogue.initiativeMessage,
                               value: .string(DoorbellMediaDPs.motion(snapshot: snapshot, t: t))))
        reportDataPoints(setting: changes)
        return snapshot
    }

    private func notePushes(_ outcome: PushOutcome) {
        doorbellCounters.pushFailures += outcome.failed + outcome.lost
    }

    /// The power machine is told how many calls and links are open (8.4: no sleep while any is).
    func noteSessionsChanged() {
        let open = links.count + (engine.session == nil ? 0 : 1)
        guard open != power.openSessions else { return }
        runPower(power.sessionsChanged(open: open, now: clock.nowMs()))
    }
}
