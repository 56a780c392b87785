import Foundation

/// The app's side of PROTOCOL.md 8: doorbell calls (43 presses answered with `video_doorbell`),
/// data points (protocols 4, 5, 31), waking a battery doorbell, and 312 on a live link.
///
/// ```swift
/// let door = try await VirtualDevice.start(.testTuyaDoorbell(kind: .doorbell), on: broker)
/// let alice = try await VirtualAppUser.start("user-alice", on: broker, reaching: [door])
/// try await door.press()
/// let ring = try await alice.waitForDoorbell()
/// try await alice.acceptDoorbell(devId: ring.devId, callId: ring.callId)
/// try await alice.waitUntilDoorbellAnswered()
/// ```
extension VirtualAppUser {
    // MARK: Doorbell calls (PROTOCOL.md 8.1, 8.2)

    /// `accept`: answers the doorbell call that rings (when given, `devId`/`callId` must name it).
    /// The call is this user's once the device's `answered` names it
    /// (``waitUntilDoorbellAnswered(timeout:)``); heartbeats then go every heartbeat interval.
    public func acceptDoorbell(devId: String? = nil, callId: String? = nil) async throws {
        try await user.acceptDoorbell(devId: devId, callId: callId)
    }

    /// `stop` before an accept: this user declines; the call rings on for the others.
    public func declineDoorbell(devId: String? = nil, callId: String? = nil) async throws {
        try await user.declineDoorbell(devId: devId, callId: callId)
    }

    /// `stop` after the accept: hangs up the doorbell call.
    public func hangUpDoorbell(devId: String? = nil, callId: String? = nil) async throws {
        try await user.hangUpDoorbell(devId: devId, callId: callId)
    }

    /// What the app does when a doorbell rings, in the profile's words: `.answer(afterSeconds:)`
    /// accepts, `.reject`, `.rejectAfter(seconds:)` and `.busy` decline (`stop`), `.ignore` lets
    /// it ring, `.manual` waits for the test.
    public func setDoorbellPolicy(_ policy: DeviceProfile.AnswerPolicy) async throws {
        try await user.setDoorbellPolicy(AnswerPolicy(profile: policy))
    }

    /// The doorbell call's phase now: `idle`, `ringingIncoming` (ringing, or accepted and waiting
    /// for the device's `answered`), `answered`.
    public var doorbellPhase: CallPhase { get async { await user.doorbellPhase } }

    /// Waits until a doorbell press rings this phone; returns the device and the call id (the
    /// 43's `edata`).
    @discardableResult
    public func waitForDoorbell(timeout: Duration = .seconds(5)) async throws -> (devId: String, callId: String) {
        let (dev, call) = try await firstDoorbell("a doorbell rings", timeout: timeout) { e -> (String, String)? in
            if case .doorbellRinging(let devId, let callId, _) = e { (devId, callId) } else { nil }
        }
        return (dev, call)
    }

    /// Waits until the device's `answered` arrives (PROTOCOL.md 8.2); returns the call id and the
    /// user who accepted (this user, or another: then the call ends here with -2522).
    @discardableResult
    public func waitUntilDoorbellAnswered(timeout: Duration = .seconds(5)) async throws -> (callId: String, by: String) {
        let (call, by) = try await firstDoorbell("the doorbell call is answered", timeout: timeout) { e -> (String, String)? in
            if case .doorbellReceived(let m) = e, m.event == .answered { (m.eData, m.uid ?? "") } else { nil }
        }
        return (call, by)
    }

    /// Waits until the device sends the `video_doorbell` `event` (`timeout`, `cancel`, `stop`,
    /// `heartbeat`, `answered`) concerning this user or everyone; returns the message.
    @discardableResult
    public func waitForDoorbellMessage(_ event: DoorbellEvent, timeout: Duration = .seconds(5)) async throws -> VideoDoorbellMessage {
        let me = userId
        return try await firstDoorbell("video_doorbell \(event.rawValue)", timeout: timeout) { e in
            if case .doorbellReceived(let m) = e, m.event == event, m.uid == nil || m.uid == me || event == .answered { m } else { nil }
        }
    }

    /// PROTOCOL.md 8.2, 4: opens the P2P link of the accepted doorbell call (`sessionid` = the call
    /// id) and decodes the device's video; returns the session id.
    @discardableResult
    public func openDoorbellVideo(stream: StreamType = .main) async throws -> String {
        try await user.openDoorbellVideo(streamType: stream)
    }

    // MARK: Data points (PROTOCOL.md 8.3)

    /// Protocol 5: sets one DP of `devId`.
    public func setDP(devId: String, _ id: DPId, _ value: DPValue) async throws {
        try await user.setDPs(devId: devId, [id: value])
    }

    /// Protocol 5: sets several DPs of `devId` in one message.
    public func setDPs(devId: String, _ values: [DPId: DPValue]) async throws {
        try await user.setDPs(devId: devId, values)
    }

    /// Protocol 31: asks `devId` to report `ids` (every DP when empty).
    public func queryDPs(devId: String, ids: [DPId] = []) async throws {
        try await user.queryDPs(devId: devId, ids: ids)
    }

    /// The last value `devId` reported for each DP.
    public func dps(devId: String) async -> [DPId: DPValue] { await user.dps(devId: devId) }

    /// Waits until `devId` has reported DP `id` (with `value`, when given): at once when its last
    /// report already says so. Returns the value.
    /// - Throws: ``WaitTimeout`` with the last value and the events seen.
    @discardableResult
    public func waitForDP(devId: String, _ id: DPId, equals value: DPValue? = nil,
                          timeout: Duration = .seconds(5)) async throws -> DPValue {
        let awaited = "DP \(id)" + (value.map { " = \($0)" } ?? "") + " from \(devId)"
        if let now = await user.dp(devId: devId, id), value == nil || now == value { return now }
        return try await firstDoorbell(awaited, timeout: timeout) { e in
            if case .dpReport(let from, let dps) = e, from == devId, let v = dps[id], value == nil || v == value { v } else { nil }
        }
    }

    // MARK: Sleep and wake (PROTOCOL.md 8.4)

    /// Wakes `devId` as go2rtc does (CRC32 of its localKey on `m/w/{devId}`) and waits for DP 149
    /// `true`; returns the latency the app saw.
    /// - Throws: ``WaitTimeout`` when no DP 149 `true` came within `timeout`.
    @discardableResult
    public func wake(devId: String, timeout: Duration = .seconds(10)) async throws -> DoorbellWake {
        let from = history.count
        let outcome: Result<DoorbellWake, AppError>
        do {
            outcome = .success(try await user.wake(devId: devId, timeout: timeout))
        } catch {
            outcome = .failure(error)
        }
        switch outcome {
        case .success(let wake):
            return wake
        case .failure(.noAnswer):
            // (A `catch AppError.noAnswer` clause with an `await` in it crashes the 6.x compiler's
            // SILGen; the result is matched outside the catch instead.)
            let last = await user.dp(devId: devId, 149)
            throw WaitTimeout(subject: "app user \(userId)", awaited: "DP 149 true from \(devId) after a wake",
                              seconds: timeout.seconds,
                              state: "last 149: " + (last.map { "\($0)" } ?? "never reported"),
                              seen: history.recent(from: from).map(EventText.app))
        case .failure(let error):
            throw error
        }
    }

    // MARK: Speaker and clarity (PROTOCOL.md 8.6)

    /// 312 `speaker` on the accepted doorbell call's link; returns the reply's `resCode` (0 done).
    @discardableResult
    public func speaker(on: Bool, timeout: Duration = .seconds(3)) async throws -> Int64 {
        try await user.speaker(on: on, timeout: timeout)
    }

    /// 312 `resolution` on the accepted doorbell call's link; returns the reply's `resCode`.
    @discardableResult
    public func resolution(_ stream: StreamType, timeout: Duration = .seconds(3)) async throws -> Int64 {
        try await user.resolution(stream, timeout: timeout)
    }

    private func firstDoorbell<T>(_ awaited: String, timeout: Duration,
                                  _ pick: @escaping @Sendable (AppEvent) -> T?) async throws -> T {
        let from = history.cursor
        if let event = await history.next(within: timeout, where: { pick($0) != nil }), let value = pick(event) {
            return value
        }
        throw WaitTimeout(subject: "app user \(userId)", awaited: awaited, seconds: timeout.seconds,
                          state: "doorbell \((await user.doorbellPhase).rawValue)",
                          seen: history.recent(from: from).map(EventText.app))
    }
}
