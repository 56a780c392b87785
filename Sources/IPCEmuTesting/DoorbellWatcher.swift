import Foundation

/// What a ``VirtualDevice`` said on its out topic about PROTOCOL.md 8: its protocol 43 presses and
/// its protocol 4 DP reports, read off the wire by a silent app user of its own (it never sends),
/// subscribed before the device connects so the reports "on connect" are seen too.
final class DoorbellWatcher: Sendable {
    let user: AppUser
    let history = EventHistory<AppEvent>()
    private let pump: Task<Void, Never>

    private init(user: AppUser, events: AsyncStream<AppEvent>) {
        self.user = user
        let history = self.history
        pump = Task {
            for await event in events {
                switch event {
                case .doorbellPressed, .dpReport, .doorbellReceived: history.append(event)
                default: break
                }
            }
            history.finish()
        }
    }

    deinit { pump.cancel() }

    /// Subscribes to the device's out topic (its address from the profile).
    static func start(profile: DeviceProfile, broker: TestBroker) async throws -> DoorbellWatcher {
        let uid = "ipcemu-watcher-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let user = try AppUser(userId: uid, connection: broker.clientOptions(clientID: uid),
                               config: AppEngineConfig(userId: uid, incomingPolicy: .ignore))
        let watcher = DoorbellWatcher(user: user, events: await user.events())
        try await user.start()
        try await user.add(VirtualAppUser.address(of: profile))
        return watcher
    }

    func stop() async { await user.stop() }
}

extension VirtualDevice {
    // MARK: Doorbell kinds (PROTOCOL.md 8)

    /// The DPs the device reported so far on its out topic (protocol 4), each with its last value.
    /// Empty for a device without DPs.
    public var reportedDPs: [DPId: DPValue] {
        get async { await watcher?.user.dps(devId: devId) ?? [:] }
    }

    /// Waits until the device has reported DP `id` on its out topic (with `value`, when given):
    /// at once when its last report of that DP already says so. Returns the value.
    /// - Throws: ``WaitTimeout`` with the reports seen; ``WaitTimeout`` at once for a device
    ///   without DPs (a `screen_ipc` profile without `dps`).
    @discardableResult
    public func waitForDP(_ id: DPId, equals value: DPValue? = nil, timeout: Duration = .seconds(5)) async throws -> DPValue {
        let awaited = "DP \(id)" + (value.map { " = \($0)" } ?? "") + " reported"
        guard let watcher else {
            throw WaitTimeout(subject: "device \(devId)", awaited: awaited, seconds: timeout.seconds,
                              state: "the profile has no DPs", seen: [])
        }
        if let now = await watcher.user.dp(devId: devId, id), value == nil || now == value { return now }
        let from = watcher.history.cursor
        let event = await watcher.history.next(within: timeout) { e in
            guard case .dpReport(_, let dps) = e, let v = dps[id] else { return false }
            return value == nil || v == value
        }
        if case .dpReport(_, let dps)? = event, let v = dps[id] { return v }
        throw WaitTimeout(subject: "device \(devId)", awaited: awaited, seconds: timeout.seconds,
                          state: "last \(id): " + ((await watcher.user.dp(devId: devId, id)).map { "\($0)" } ?? "never reported"),
                          seen: watcher.history.recent(from: from).map(EventText.app))
    }

    /// Waits for the device's next protocol 43 press on its out topic; returns the call id
    /// (`edata`, PROTOCOL.md 8.1).
    @discardableResult
    public func waitForPressMessage(timeout: Duration = .seconds(5)) async throws -> String {
        guard let watcher else {
            throw WaitTimeout(subject: "device \(devId)", awaited: "a 43 press", seconds: timeout.seconds,
                              state: "kind \(profile.doorbell.kind.rawValue): a press is a §3 call", seen: [])
        }
        let from = watcher.history.cursor
        if case .doorbellPressed(let p)? = await watcher.history.next(within: timeout, where: { e in
            if case .doorbellPressed = e { true } else { false }
        }) {
            return p.edata
        }
        throw WaitTimeout(subject: "device \(devId)", awaited: "a 43 press", seconds: timeout.seconds,
                          seen: watcher.history.recent(from: from).map(EventText.app))
    }

    /// Waits until the device has sent the `video_doorbell` `event` (`answered`, `timeout`,
    /// `cancel`, `stop`, `heartbeat`) on its out topic; returns the message.
    @discardableResult
    public func waitUntilSentDoorbell(_ event: DoorbellEvent, timeout: Duration = .seconds(5)) async throws -> VideoDoorbellMessage {
        let awaited = "the device sends video_doorbell \(event.rawValue)"
        guard let watcher else {
            throw WaitTimeout(subject: "device \(devId)", awaited: awaited, seconds: timeout.seconds,
                              state: "kind \(profile.doorbell.kind.rawValue)", seen: [])
        }
        let from = watcher.history.cursor
        if case .doorbellReceived(let m)? = await watcher.history.next(within: timeout, where: { e in
            if case .doorbellReceived(let m) = e { m.event == event } else { false }
        }) {
            return m
        }
        throw WaitTimeout(subject: "device \(devId)", awaited: awaited, seconds: timeout.seconds,
                          seen: watcher.history.recent(from: from).map(EventText.app))
    }
}
