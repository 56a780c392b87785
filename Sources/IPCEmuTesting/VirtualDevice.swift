import CallRuntime
import Foundation

/// One virtual doorbell for a test: a real ``Device`` (one MQTT connection, the call engine, the
/// WebRTC answerer) started on a ``TestBroker``, with every event it reports recorded from the
/// start so the wait helpers never miss one.
///
/// ```swift
/// let device = try await VirtualDevice.start(.testDoorbell(), on: broker)
/// try await device.press()
/// try await device.waitUntil(.ringingOutgoing)
/// ```
///
/// Actions throw the engine's `CallActionError` when they do not fit the call's phase (answering
/// when nothing rings, pressing during a call). Waits throw ``WaitTimeout``, whose message says
/// what was seen.
public final class VirtualDevice: Sendable {
    /// The device itself, for anything this wrapper does not cover.
    public let device: Device
    /// The profile it runs (a template's instance for a fleet member).
    public let profile: DeviceProfile
    /// Its device id.
    public var devId: String { profile.identity.devId }

    let history = EventHistory<DeviceEvent>()
    private let pump: Task<Void, Never>
    /// PROTOCOL.md 8: its 43 presses and DP reports as read off its out topic (a device with DPs
    /// or of a doorbell kind; DoorbellWatcher.swift).
    let watcher: DoorbellWatcher?

    private init(device: Device, profile: DeviceProfile, events: AsyncStream<DeviceEvent>, watcher: DoorbellWatcher? = nil) {
        self.device = device
        self.profile = profile
        self.watcher = watcher
        let history = self.history
        pump = Task {
            for await event in events { history.append(event) }
            history.finish()
        }
    }

    deinit { pump.cancel() }

    // MARK: Starting and stopping

    /// Starts a device from a profile built in code (see ``DeviceProfile/testDoorbell(devId:household:answerPolicy:)``)
    /// and waits until it is reachable: connected, subscribed, its online status published.
    /// A template profile (`devId` with `{index}`) runs as its instance 0.
    /// - Parameters:
    ///   - log: where the device logs (default: warnings and errors on standard error).
    ///   - timeout: how long to wait for the broker.
    public static func start(_ profile: DeviceProfile, on broker: TestBroker,
                             log: EventLog = EventLog(minimumLevel: .warning),
                             timeout: Duration = .seconds(5)) async throws -> VirtualDevice {
        let concrete = profile.isTemplate ? try profile.instance(index: 0) : profile
        let device = try Device(profile: concrete, connection: broker.clientOptions(clientID: concrete.identity.devId),
                                log: log)
        let watcher = concrete.doorbell.kind.isTuyaDoorbell || !concrete.dataPoints.ids.isEmpty
            ? try await DoorbellWatcher.start(profile: concrete, broker: broker) : nil
        let virtual = VirtualDevice(device: device, profile: concrete, events: await device.events(), watcher: watcher)
        try await device.start()
        guard await device.waitUntilConnected(timeout: timeout) else {
            await device.stop()
            await watcher?.stop()
            throw WaitTimeout(subject: "device \(concrete.identity.devId)", awaited: "connected to \(broker.url)",
                              seconds: timeout.seconds, seen: virtual.history.all.map(EventText.device))
        }
        return virtual
    }

    /// Starts a device from a profile file (validated as `ipcemu profile check` does). A field
    /// that does not apply is ignored; its warning is logged and kept in `profile.warnings`.
    /// - Throws: `ProfileError` naming the file, line and field of the first mistake.
    public static func start(profileAt path: String, on broker: TestBroker,
                             log: EventLog = EventLog(minimumLevel: .warning),
                             timeout: Duration = .seconds(5)) async throws -> VirtualDevice {
        let profile = try DeviceProfile.load(path: path)
        for warning in profile.warnings { log.log(.warning, "profile: \(warning)") }
        return try await start(profile, on: broker, log: log, timeout: timeout)
    }

    /// Clean shutdown (PROTOCOL.md 3.3): any call is ended with reason `shutdown`, the device goes
    /// offline and disconnects. Pending waits end.
    public func stop() async {
        await device.stop()
        await watcher?.stop()
    }

    // MARK: The device's buttons and the operator's actions

    /// Presses the doorbell: calls `targets` (default: the profile's household). Returns the
    /// session id.
    @discardableResult
    public func press(targets: [String] = [], callType: CallType? = nil, timeoutSeconds: Double? = nil) async throws -> String {
        try await device.press(targets: targets, callType: callType, timeoutSeconds: timeoutSeconds)
    }

    /// Answers the incoming call that rings.
    public func answer() async throws { try await device.answer() }
    /// Rejects the incoming call that rings.
    public func reject() async throws { try await device.reject() }
    /// Cancels the device's own call before anyone answers.
    public func cancel() async throws { try await device.cancel() }
    /// Hangs up the answered call.
    public func hangUp() async throws { try await device.hangUp() }

    /// What the device does with the next incoming call, in the profile's words:
    /// `.answer(afterSeconds:)`, `.reject`, `.rejectAfter(seconds:)`, `.ignore`, `.busy`, `.manual`.
    public func setAnswerPolicy(_ policy: DeviceProfile.AnswerPolicy) async throws {
        try await device.setAnswerPolicy(AnswerPolicy(profile: policy))
    }

    // MARK: Faults

    /// Replaces the faults in force: heartbeat replies suppressed, replies delayed.
    public func setFaults(_ faults: DeviceFaults) async { await device.setFaults(faults) }
    /// Every incoming call gets `busy` as if another call were on (or stops doing so).
    public func setActingBusy(_ busy: Bool) async throws { try await device.setActingBusy(busy) }
    /// Drops the MQTT connection without a word (the broker publishes the last will) and
    /// reconnects after `seconds`.
    public func dropConnection(for seconds: Double) async { await device.dropConnection(for: seconds) }
    /// Drops every P2P link as if the network failed; returns how many were open.
    @discardableResult
    public func dropMediaLinks() async -> Int { await device.dropMediaLinks() }

    // MARK: State and events

    /// A snapshot: connection, call phase, session, answer policy, calls ended, media counters.
    public var state: DeviceStatus { get async { await device.status } }

    /// The call phase now.
    public var phase: CallPhase { get async { await device.status.phase } }

    /// Every event from now on, in order; finishes when the device stops.
    public func events() async -> AsyncStream<DeviceEvent> { await device.events() }

    /// Every event since the device started, oldest first.
    public var eventsSoFar: [DeviceEvent] { history.all }

    // MARK: Waiting

    /// Waits for the next event (after the ones earlier waits consumed) that `match` accepts and
    /// returns it; consecutive waits see consecutive events.
    /// - Parameter awaited: what is awaited, in words, for the failure message.
    /// - Throws: ``WaitTimeout`` with the state and the events seen.
    @discardableResult
    public func waitFor(_ awaited: String, timeout: Duration = .seconds(5),
                        where match: @escaping @Sendable (DeviceEvent) -> Bool) async throws -> DeviceEvent {
        try await first(awaited, timeout: timeout) { match($0) ? $0 : nil }
    }

    /// Waits until an incoming call rings the device; returns its session id.
    @discardableResult
    public func waitUntilRinging(timeout: Duration = .seconds(5)) async throws -> String {
        try await first("the device rings", timeout: timeout) {
            if case .ringing(let sessionId) = $0 { sessionId } else { nil }
        }
    }

    /// Waits until the device has sent `event` (`.answer`, `.reject`, `.hangUp`, ...); returns
    /// the message.
    @discardableResult
    public func waitUntilSent(_ event: CallEvent, timeout: Duration = .seconds(5)) async throws -> CallMessage {
        try await first("the device sends \(event.rawValue)", timeout: timeout) {
            if case .sent(let m) = $0, m.event == event { m } else { nil }
        }
    }

    /// Waits until a call ends on the device; returns its record (outcome, reason, peers, times).
    @discardableResult
    public func waitForCallEnd(timeout: Duration = .seconds(5)) async throws -> CallRecord {
        try await first("a call ends", timeout: timeout) {
            if case .callEnded(let record) = $0 { record } else { nil }
        }
    }

    /// The next event `pick` turns into a value.
    private func first<T>(_ awaited: String, timeout: Duration,
                          _ pick: @escaping @Sendable (DeviceEvent) -> T?) async throws -> T {
        let from = history.cursor
        if let event = await history.next(within: timeout, where: { pick($0) != nil }), let value = pick(event) {
            return value
        }
        throw WaitTimeout(subject: "device \(devId)", awaited: awaited, seconds: timeout.seconds,
                          state: (await device.status.phase).rawValue,
                          seen: history.recent(from: from).map(EventText.device))
    }

    /// Waits until the device's call phase is `phase` (polled: a phase passed through between
    /// two looks is not seen; wait for an event for that).
    /// - Throws: ``WaitTimeout`` naming the phases seen and the events meanwhile.
    public func waitUntil(_ phase: CallPhase, timeout: Duration = .seconds(5)) async throws {
        let from = history.count
        var phases: [CallPhase] = []
        let deadline = ContinuousClock.now + timeout
        while true {
            let now = await device.status.phase
            if now == phase { return }
            if phases.last != now { phases.append(now) }
            if ContinuousClock.now >= deadline { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw WaitTimeout(subject: "device \(devId)", awaited: "phase \(phase.rawValue)", seconds: timeout.seconds,
                          state: phases.map(\.rawValue).joined(separator: " -> "),
                          seen: history.recent(from: from).map(EventText.device))
    }

    /// Waits until the device has sent at least `count` video frames over its P2P links; returns
    /// the media totals.
    @discardableResult
    public func waitUntilFramesSent(atLeast count: Int, timeout: Duration = .seconds(20)) async throws -> MediaTotals {
        let deadline = ContinuousClock.now + timeout
        var media = await device.status.media
        while media.framesSent < count {
            if ContinuousClock.now >= deadline {
                throw WaitTimeout(subject: "device \(devId)", awaited: "\(count) video frames sent", seconds: timeout.seconds,
                                  state: "\(media.framesSent) frames sent, \(media.openLinks) open links",
                                  seen: history.recent(from: 0).map(EventText.device))
            }
            try await Task.sleep(for: .milliseconds(20))
            media = await device.status.media
        }
        return media
    }
}
