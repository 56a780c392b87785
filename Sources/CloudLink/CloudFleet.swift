import Foundation
import TuyaCloud

/// Where one device of a cloud fleet is (issue 21 item 5), from its runner's events.
public enum CloudFleetMemberState: String, Sendable, Codable, CaseIterable {
    /// Asking iotdns, on the direct link before the QR code, or connecting the device link.
    case joining
    /// The QR code is shown: waiting for the app's scan (the token on the direct link, 9.2).
    case waitingForToken
    /// The token came: activating, then the device link.
    case paired
    /// The device link is up and the device runs on it.
    case joined
    /// The cloud (or the network) refused the last step: the machine backs off and tries again.
    case refused
}

/// How many devices of a cloud fleet are in each state.
public struct CloudFleetCounts: Sendable, Equatable, Codable {
    public var total = 0
    public var joining = 0
    public var waitingForToken = 0
    public var paired = 0
    public var joined = 0
    public var refused = 0

    public init() {}

    mutating func add(_ state: CloudFleetMemberState) {
        switch state {
        case .joining: joining += 1
        case .waitingForToken: waitingForToken += 1
        case .paired: paired += 1
        case .joined: joined += 1
        case .refused: refused += 1
        }
    }
}

/// Many devices on a cloud, one licence each (issue 21 item 5): one `CloudJoinRunner` per licence
/// with its own state folder, all sharing one `CloudFleetPacer` so the joins (iotdns and
/// activation requests) reach the cloud at most `activationsPerSecond` apart. Each runner's events
/// go to `handler` (with the member's index), in order per member, after the member's state is
/// updated; `changes` yields the counts after each change.
public actor CloudFleet {
    public struct Member: Sendable {
        public var licence: TuyaLicence
        /// The folder of this device's state file (`CloudStateStore`).
        public var stateDirectory: String

        public init(licence: TuyaLicence, stateDirectory: String) {
            self.licence = licence
            self.stateDirectory = stateDirectory
        }
    }

    public struct Configuration: Sendable {
        public var members: [Member]
        public var softwareVersion: String
        public var iotdns: IotDNSServer
        public var iotdnsCA: [UInt8]?
        /// The skill JSON (PROTOCOL.md 8.7) every device uploads.
        public var skill: String?
        public var activationsPerSecond: Double

        public init(members: [Member], softwareVersion: String, iotdns: IotDNSServer, iotdnsCA: [UInt8]?,
                    skill: String?, activationsPerSecond: Double) {
            self.members = members
            self.softwareVersion = softwareVersion
            self.iotdns = iotdns
            self.iotdnsCA = iotdnsCA
            self.skill = skill
            self.activationsPerSecond = activationsPerSecond
        }
    }

    public nonisolated let members: [Member]
    public nonisolated let pacer: CloudFleetPacer
    public nonisolated let changes: AsyncStream<CloudFleetCounts>
    private let changeSink: AsyncStream<CloudFleetCounts>.Continuation
    private let configuration: Configuration
    private let handler: @Sendable (Int, CloudRunnerEvent) async -> Void
    private let paced: (@Sendable (Int, HTTPSRequest.Purpose, ContinuousClock.Instant) -> Void)?
    private var runners: [CloudJoinRunner] = []
    private var pumps: [Task<Void, Never>] = []
    private var states: [CloudFleetMemberState]
    private var reasons: [String?]
    private var started = false

    /// `paced` is told each time a member's paced request (iotdns, activation) is let through.
    public init(configuration: Configuration, paced: (@Sendable (Int, HTTPSRequest.Purpose, ContinuousClock.Instant) -> Void)? = nil,
                handler: @escaping @Sendable (Int, CloudRunnerEvent) async -> Void) {
        self.configuration = configuration
        self.paced = paced
        self.members = configuration.members
        self.handler = handler
        pacer = CloudFleetPacer(perSecond: configuration.activationsPerSecond)
        states = Array(repeating: .joining, count: configuration.members.count)
        reasons = Array(repeating: nil, count: configuration.members.count)
        (changes, changeSink) = AsyncStream<CloudFleetCounts>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Starts every runner at once: the pacer spreads their requests.
    public func start() async {
        guard !started else { return }
        started = true
        let pacer = self.pacer, paced = self.paced
        for (index, member) in configuration.members.enumerated() {
            let before: @Sendable (HTTPSRequest.Purpose) async -> Void = { purpose in
                guard CloudFleetPacer.paces(purpose) else { return }
                let letThrough = await pacer.admit()
                paced?(index, purpose, letThrough)
            }
            let join = CloudJoinConfig(licence: member.licence, softwareVersion: configuration.softwareVersion,
                                       iotdns: configuration.iotdns, skill: configuration.skill,
                                       jitterSeed: 0x5EED &+ UInt64(index))
            // No last will on the device link, as `ipcemu run --cloud` (the SDK's CONNECT has none).
            let runner = CloudJoinRunner(configuration: .init(
                join: join, stateStore: CloudStateStore(directory: member.stateDirectory, uuid: member.licence.uuid),
                iotdnsCA: configuration.iotdnsCA, deviceLinkWill: { _ in nil }, beforeRequest: before))
            runners.append(runner)
            let handler = self.handler
            pumps.append(Task { [weak self] in
                for await event in runner.events {
                    await self?.note(event, of: index)
                    await handler(index, event)
                }
            })
        }
        changeSink.yield(counts())
        for runner in runners { await runner.start() }
    }

    /// Stops every runner (each closes its link); no event follows.
    public func stop() async {
        // At once: each runner's DISCONNECT may wait up to 2 s.
        await withTaskGroup(of: Void.self) { group in
            for runner in runners { group.addTask { await runner.stop() } }
        }
        for pump in pumps { pump.cancel() }
        pumps.removeAll()
        changeSink.finish()
    }

    public func counts() -> CloudFleetCounts {
        var counts = CloudFleetCounts()
        counts.total = states.count
        for state in states { counts.add(state) }
        return counts
    }

    public func state(of index: Int) -> CloudFleetMemberState? { states.indices.contains(index) ? states[index] : nil }

    /// The last refusal's log line of a member in `.refused`.
    public func refusal(of index: Int) -> String? { reasons.indices.contains(index) ? reasons[index] : nil }

    private func note(_ event: CloudRunnerEvent, of index: Int) {
        guard states.indices.contains(index) else { return }
        let old = states[index]
        switch event {
        case .pairing:
            states[index] = .waitingForToken
        case .pairingDone:
            states[index] = .paired
        case .joined:
            states[index] = .joined
            reasons[index] = nil
        case .left:
            states[index] = .joining
        case .log(let level, let text):
            // An error while joining is a refusal the machine backs off from (a token that does
            // not open leaves it waiting for another: still waiting).
            if level == .error, old != .joined, !text.contains("Still waiting") {
                states[index] = .refused
                reasons[index] = text
            }
        }
        if states[index] != old { changeSink.yield(counts()) }
    }
}
