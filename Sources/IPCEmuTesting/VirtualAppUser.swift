import CallRuntime
import Foundation

/// The phone app signed in as one user, mirroring the SDK (`ThingSmartCallChannel`):
/// ``fetchCallAbility(devId:timeout:)``, ``startCall(devId:timeoutSeconds:callType:)``,
/// ``answer()``, ``reject()``, ``hangUp()``, and events whose ended calls carry the SDK's error
/// codes (`CallRecord.sdkError`, PROTOCOL.md 3.5). Once a call is answered it can open the video
/// link (WebRTC, PROTOCOL.md 4) and report frames, stamps and latency.
///
/// ```swift
/// let alice = try await VirtualAppUser.start("user-alice", on: broker, reaching: [device])
/// try await alice.startCall(devId: device.devId)
/// try await alice.waitUntilAnswered()
/// ```
public final class VirtualAppUser: Sendable {
    /// The app user itself, for anything this wrapper does not cover.
    public let user: AppUser
    /// Its user id (`curId` of what it sends).
    public var userId: String { user.userId }

    let history = EventHistory<AppEvent>()
    private let pump: Task<Void, Never>

    private init(user: AppUser, events: AsyncStream<AppEvent>) {
        self.user = user
        let history = self.history
        pump = Task {
            for await event in events { history.append(event) }
            history.finish()
        }
    }

    deinit { pump.cancel() }

    // MARK: Starting and stopping

    /// Signs in as `userId` on `broker` and makes each of `devices` reachable.
    /// - Parameters:
    ///   - incomingPolicy: what the app does when a device calls it (a doorbell press):
    ///     `.manual` (default: the test answers), `.answer(afterSeconds:)`, `.reject`,
    ///     `.rejectAfter(seconds:)`, `.busy`, `.ignore`.
    ///   - listen: the SDK's listen mode: take calls from any device on the default topics
    ///     (`smart/device/out/+`), including devices never added. Not needed to be called by the
    ///     devices in `devices`: an added device's calls reach the app anyway. In listen mode an
    ///     added device on the default topics is not subscribed a second time (the broker would
    ///     deliver each message twice); the app can call it once it has heard from it.
    ///   - heartbeatIntervalSeconds: how often the app sends heartbeats once answered.
    ///   - log: where the app logs (default: warnings and errors on standard error).
    public static func start(_ userId: String, on broker: TestBroker, reaching devices: [VirtualDevice] = [],
                             incomingPolicy: DeviceProfile.AnswerPolicy = .manual, listen: Bool = false,
                             heartbeatIntervalSeconds: Double = 1,
                             log: EventLog = EventLog(minimumLevel: .warning)) async throws -> VirtualAppUser {
        let ms = Int64((heartbeatIntervalSeconds * 1000).rounded())
        let config = AppEngineConfig(userId: userId, heartbeatIntervalMs: ms, heartbeatTimeoutMs: max(3 * ms, 3000),
                                     incomingPolicy: AnswerPolicy(profile: incomingPolicy))
        let user = try AppUser(userId: userId, connection: broker.clientOptions(clientID: userId), config: config, log: log)
        let app = VirtualAppUser(user: user, events: await user.events())
        try await user.start()
        if listen {
            let known = Dictionary(devices.map { ($0.devId, Self.address(of: $0.profile)) }, uniquingKeysWith: { a, _ in a })
            try await user.listenToAllDevices { devId in known[devId] ?? DeviceAddress(devId: devId) }
            for device in devices where DeviceAddress.devId(fromDefaultOutTopic: device.profile.resolvedTopics.out) == nil {
                try await app.add(device)
            }
        } else {
            for device in devices { try await app.add(device) }
        }
        return app
    }

    /// Leaves: whatever call is on ends with reason `shutdown`, then it disconnects.
    public func stop() async { await user.stop() }

    /// Makes a device reachable (its topics, payload protection and keys come from its profile).
    public func add(_ device: VirtualDevice) async throws {
        try await user.add(Self.address(of: device.profile))
    }

    /// Makes a device reachable that runs elsewhere (`ipcemu run`, a real doorbell).
    public func add(devId: String, profile: DeviceProfile) async throws {
        try await user.add(Self.address(of: profile.instance(devId: devId)))
    }

    static func address(of p: DeviceProfile) -> DeviceAddress {
        let t = p.resolvedTopics
        return DeviceAddress(devId: p.identity.devId, inTopic: t.in, outTopic: t.out, metaTopic: t.meta,
                             security: p.security, localKey: p.identity.localKey, p2pPassword: p.identity.p2pPassword)
    }

    // MARK: The SDK's calls

    /// `fetchDeviceCallAbilityByDevId`: asks the device (protocol 309) what it can do.
    public func fetchCallAbility(devId: String, timeout: Duration = .seconds(3)) async throws -> AbilityAnswer {
        try await user.fetchDeviceCallAbility(devId: devId, timeout: timeout)
    }

    /// `startCall`: calls a device; returns the session id. Throws `onCalling` (-2520) while a
    /// call is on.
    @discardableResult
    public func startCall(devId: String, timeoutSeconds: Int64 = 30, callType: CallType = .oneToOne) async throws -> String {
        try await user.startCall(devId: devId, timeoutSeconds: timeoutSeconds, callType: callType)
    }

    /// Answers the device's call that rings the app.
    public func answer() async throws { try await user.answer() }
    /// Rejects the device's call that rings the app.
    public func reject() async throws { try await user.reject() }
    /// Replies busy to the device's call that rings the app.
    public func busy() async throws { try await user.busy() }
    /// Cancels the app's own call before the device answers.
    public func cancel() async throws { try await user.cancel() }
    /// Hangs up the answered call.
    public func hangUp() async throws { try await user.hangUp() }

    /// `isOnCalling`.
    public var isOnCalling: Bool { get async { await user.isOnCalling } }
    /// The call phase now.
    public var phase: CallPhase { get async { await user.phase } }
    /// The session now, if any.
    public var session: CallSessionSnapshot? { get async { await user.session } }
    /// Every call that ended so far, with its SDK error code.
    public var endedCalls: [CallRecord] { get async { await user.endedCalls } }

    /// Every event from now on, in order; finishes when the app stops.
    public func events() async -> AsyncStream<AppEvent> { await user.events() }

    /// Every event since the app started, oldest first.
    public var eventsSoFar: [AppEvent] { history.all }

    // MARK: Video (PROTOCOL.md 4: the app offers, the device answers)

    /// Opens the P2P link of the answered call and decodes the device's video; returns the
    /// session id. `sendVideo` makes it two-way (the app sends its own test pattern).
    @discardableResult
    public func openVideo(stream: StreamType = .main, sendVideo: VideoFormat? = nil) async throws -> String {
        try await user.openVideo(streamType: stream, sendVideo: sendVideo)
    }

    /// What the app measured on the session's video (default: the answered call's): frames
    /// decoded, stamps read, dropped frames, size, answer -> first frame, capture-to-decode latency.
    public func videoStats(sessionId: String? = nil) async -> VideoStats? {
        guard let sid = await resolvedSession(sessionId) else { return nil }
        return await user.videoStats(sessionId: sid)
    }

    /// Closes the session's video link (the call goes on).
    public func closeVideo(sessionId: String? = nil) async {
        guard let sid = await resolvedSession(sessionId) else { return }
        await user.closeVideo(sessionId: sid)
    }

    private func resolvedSession(_ sessionId: String?) async -> String? {
        if let sessionId { return sessionId }
        if let current = await user.session?.sessionId { return current }
        if let doorbell = await user.doorbellSession?.sessionId { return doorbell }  // PROTOCOL.md 8.2
        return await user.endedCalls.last?.sessionId
    }

    /// Waits until at least `count` frames of the session's video were decoded; returns the stats.
    @discardableResult
    public func waitForVideoFrames(_ count: Int, sessionId: String? = nil,
                                   timeout: Duration = .seconds(20)) async throws -> VideoStats {
        let deadline = ContinuousClock.now + timeout
        let from = history.count
        while true {
            let stats = await videoStats(sessionId: sessionId)
            if let stats, stats.framesDecoded >= count { return stats }
            if ContinuousClock.now >= deadline {
                throw WaitTimeout(subject: "app user \(userId)", awaited: "\(count) video frames decoded",
                                  seconds: timeout.seconds, state: stats?.summary ?? "no video link",
                                  seen: history.recent(from: from).map(EventText.app))
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    // MARK: Waiting

    /// Waits for the next event (after the ones earlier waits consumed) that `match` accepts and
    /// returns it; consecutive waits see consecutive events.
    /// - Throws: ``WaitTimeout`` with the phase and the events seen.
    @discardableResult
    public func waitFor(_ awaited: String, timeout: Duration = .seconds(5),
                        where match: @escaping @Sendable (AppEvent) -> Bool) async throws -> AppEvent {
        try await first(awaited, timeout: timeout) { match($0) ? $0 : nil }
    }

    /// Waits until the called device acknowledged with `ring`; returns the session id.
    @discardableResult
    public func waitUntilDeviceRings(timeout: Duration = .seconds(5)) async throws -> String {
        try await first("the device rings", timeout: timeout) {
            if case .deviceRinging(let sessionId, _) = $0 { sessionId } else { nil }
        }
    }

    /// Waits until a device calls this user (a doorbell press rings the phone); returns the
    /// session id and the device id.
    @discardableResult
    public func waitForIncomingCall(timeout: Duration = .seconds(5)) async throws -> (sessionId: String, devId: String) {
        let (sid, dev) = try await first("an incoming call", timeout: timeout) { e -> (String, String)? in
            if case .incomingCall(let sessionId, let devId) = e { (sessionId, devId) } else { nil }
        }
        return (sid, dev)
    }

    /// Waits until the call is answered (the device's `answer` arrived, or this app answered);
    /// returns the session id.
    @discardableResult
    public func waitUntilAnswered(timeout: Duration = .seconds(5)) async throws -> String {
        try await first("the call is answered", timeout: timeout) {
            switch $0 {
            case .received(let m, _) where m.event == .answer: m.sessionId
            case .sent(let m, _) where m.event == .answer: m.sessionId
            default: nil
            }
        }
    }

    /// Waits until a call ends; returns its record: outcome, reason and `sdkError`, the SDK's
    /// error code (-2510 rejected, -2511 busy, -2512 not answered, ...; nil for the app's own
    /// hang-up).
    @discardableResult
    public func waitForCallEnd(timeout: Duration = .seconds(5)) async throws -> CallRecord {
        try await first("a call ends", timeout: timeout) {
            if case .callEnded(let record) = $0 { record } else { nil }
        }
    }

    /// Waits until the app's call phase is `phase` (polled).
    public func waitUntil(_ phase: CallPhase, timeout: Duration = .seconds(5)) async throws {
        let from = history.count
        var phases: [CallPhase] = []
        let deadline = ContinuousClock.now + timeout
        while true {
            let now = await user.phase
            if now == phase { return }
            if phases.last != now { phases.append(now) }
            if ContinuousClock.now >= deadline { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw WaitTimeout(subject: "app user \(userId)", awaited: "phase \(phase.rawValue)", seconds: timeout.seconds,
                          state: phases.map(\.rawValue).joined(separator: " -> "),
                          seen: history.recent(from: from).map(EventText.app))
    }

    private func first<T>(_ awaited: String, timeout: Duration,
                          _ pick: @escaping @Sendable (AppEvent) -> T?) async throws -> T {
        let from = history.cursor
        if let event = await history.next(within: timeout, where: { pick($0) != nil }), let value = pick(event) {
            return value
        }
        throw WaitTimeout(subject: "app user \(userId)", awaited: awaited, seconds: timeout.seconds,
                          state: (await user.phase).rawValue,
                          seen: history.recent(from: from).map(EventText.app))
    }
}

extension DeviceProfile {
    /// The same profile for `devId` (a template's `{index}` aside, any concrete id).
    fileprivate func instance(devId: String) throws -> DeviceProfile {
        devId == identity.devId ? self : try withDevId(devId)
    }
}
