import AppSimulator
import CallEngine
import CallRuntime
import DeviceProfile
import Emulator
import Foundation
import IPCWire
import MQTTTransport

/// The devices (and, with the simulated app, the app users) of a scenario, in this process, on a
/// private mosquitto or on the broker given. Drives them through their public API only.
public final class InProcessWorld: ScenarioWorld, Sendable {
    public let appMode: AppMode
    public let brokerURL: String
    public let devices: [any ScenarioDeviceDriver]
    public let clock: any ScenarioClock = WallScenarioClock()
    private let apps: [String: InProcessApp]
    private let broker: MosquittoBroker?

    /// Starts the broker (when `brokerURL` is nil), the devices and the app users, and waits until
    /// every one is connected.
    public static func start(_ scenario: Scenario, brokerURL: String?, appMode: AppMode,
                             log: EventLog = EventLog(minimumLevel: .error)) async throws -> InProcessWorld {
        var broker: MosquittoBroker?
        let url: String
        if let brokerURL {
            url = brokerURL
        } else {
            let started = try MosquittoBroker()
            broker = started
            url = started.url
        }
        var devices: [InProcessDevice] = []
        var apps: [String: InProcessApp] = [:]
        do {
            let setup = scenario.devices
            for index in 0..<setup.count {
                var profile = setup.profile
                if profile.isTemplate || setup.count > 1 { profile = try profile.instance(index: index) }
                if let household = setup.householdTemplate {
                    profile.behaviour.household = household.map { expandIndex($0, index: index) }
                }
                let options = try MQTTClientOptions(brokerURL: url, clientID: profile.identity.devId)
                let device = try Device(profile: profile, connection: options, log: log)
                let driver = InProcessDevice(device: device)
                devices.append(driver)
                try await device.start()
                guard await device.waitUntilConnected(timeout: .seconds(10)) else {
                    throw ScenarioActionError("device \(profile.identity.devId) did not connect to \(url)")
                }
            }
            if appMode == .simulated {
                for app in scenario.apps {
                    let instances: [(String, [InProcessDevice])] = app.isPerDevice
                        ? devices.enumerated().map { (expandIndex(app.user, index: $0.offset), [$0.element]) }
                        : [(app.user, devices)]
                    for (userId, reach) in instances {
                        let config = AppEngineConfig(userId: userId,
                                                     heartbeatIntervalMs: Int64(app.heartbeatInterval * 1000),
                                                     heartbeatTimeoutMs: Int64(app.heartbeatTimeout * 1000),
                                                     incomingPolicy: app.answer)
                        let user = try AppUser(userId: userId, connection: try MQTTClientOptions(brokerURL: url, clientID: userId),
                                               config: config, log: log)
                        let driver = InProcessApp(user: user)
                        apps[userId] = driver
                        try await user.start(timeout: .seconds(10))
                        for d in reach { try await user.add(d.address) }
                    }
                }
            }
        } catch {
            for app in apps.values { await app.user.stop() }
            for d in devices { await d.device.stop() }
            broker?.stop()
            throw error
        }
        return InProcessWorld(appMode: appMode, brokerURL: url, devices: devices, apps: apps, broker: broker)
    }

    private init(appMode: AppMode, brokerURL: String, devices: [InProcessDevice], apps: [String: InProcessApp],
                 broker: MosquittoBroker?) {
        self.appMode = appMode
        self.brokerURL = brokerURL
        self.devices = devices
        self.apps = apps
        self.broker = broker
    }

    public func app(_ userId: String) -> (any ScenarioAppDriver)? { apps[userId] }

    public func close() async {
        for app in apps.values { await app.user.stop() }
        for d in devices {
            if let d = d as? InProcessDevice { await d.device.stop() }
        }
        broker?.stop()
    }
}

/// `{index}` (or `{index:N}`, zero-padded to N digits) replaced by the device index.
func expandIndex(_ template: String, index: Int) -> String {
    var out = ""
    var rest = Substring(template)
    while let open = rest.range(of: "{index") {
        out += rest[..<open.lowerBound]
        let after = rest[open.upperBound...]
        guard let close = after.firstIndex(of: "}") else { break }
        let spec = after[..<close]
        var number = String(index)
        if spec.hasPrefix(":"), let width = Int(spec.dropFirst()), width > number.count, width <= 12 {
            number = String(repeating: "0", count: width - number.count) + number
        }
        out += number
        rest = after[after.index(after: close)...]
    }
    return out + rest
}

/// A `Device` of this process.
final class InProcessDevice: ScenarioDeviceDriver, Sendable {
    let device: Device
    var devId: String { device.devId }

    init(device: Device) { self.device = device }

    var address: DeviceAddress {
        let p = device.profile
        let t = device.topics
        return DeviceAddress(devId: device.devId, inTopic: t.in, outTopic: t.out, metaTopic: t.meta, security: p.security,
                             localKey: p.identity.localKey, p2pPassword: p.identity.p2pPassword)
    }

    func press(targets: [String], callType: CallType?, timeoutSeconds: Double?) async throws -> String {
        try await device.press(targets: targets, callType: callType, timeoutSeconds: timeoutSeconds)
    }

    func answer() async throws { try await device.answer() }
    func reject() async throws { try await device.reject() }
    func cancel() async throws { try await device.cancel() }
    func hangUp() async throws { try await device.hangUp() }
    func setAnswerPolicy(_ policy: AnswerPolicy) async throws { try await device.setAnswerPolicy(policy) }

    func inject(_ fault: ScenarioFault) async throws {
        var faults = await device.faults
        switch fault {
        case .dropMQTT(let seconds): await device.dropConnection(for: seconds)
        case .dropP2P: await device.dropMediaLinks()
        case .heartbeatReplies(let on):
            faults.heartbeatRepliesSuppressed = !on
            await device.setFaults(faults)
        case .delayReplies(let ms):
            faults.replyDelayMs = ms
            await device.setFaults(faults)
        case .actBusy(let on): try await device.setActingBusy(on)
        case .clear:
            await device.setFaults(DeviceFaults())
            if await device.status.actingBusy { try await device.setActingBusy(false) }
        }
    }

    func phase() async -> CallPhase { await device.status.phase }
    func isConnected() async -> Bool { await device.status.connected }
    func framesSent() async -> [String: Int] { await device.mediaLinks.mapValues(\.videoFramesSent) }
    func events() async -> AsyncStream<DeviceEvent> { await device.events() }
}

/// An `AppUser` of this process.
final class InProcessApp: ScenarioAppDriver, Sendable {
    let user: AppUser
    var userId: String { user.userId }

    init(user: AppUser) { self.user = user }

    func startCall(devId: String, timeoutSeconds: Double, callType: CallType, channelType: ChannelType) async throws -> String {
        try await user.startCall(devId: devId, timeoutSeconds: Int64(timeoutSeconds.rounded(.up)), callType: callType,
                                 extra: CallExtra(channelType: channelType.rawValue))
    }

    func answer() async throws { try await user.answer() }
    func reject() async throws { try await user.reject() }
    func busy() async throws { try await user.busy() }
    func cancel() async throws { try await user.cancel() }
    func hangUp() async throws { try await user.hangUp() }
    func setIncomingPolicy(_ policy: AnswerPolicy) async throws { try await user.setIncomingPolicy(policy) }

    func openVideo(sessionId: String, devId: String, stream: StreamType, auth: String?) async throws {
        try await user.openVideo(streamType: stream, sessionId: sessionId, devId: devId, auth: auth)
    }

    func videoStats(sessionId: String) async -> VideoStats? { await user.videoStats(sessionId: sessionId) }

    func phase() async -> CallPhase { await user.phase }

    func answeredSession() async -> String? {
        guard let s = await user.session, s.phase == .answered else { return nil }
        return s.sessionId
    }
    func events() async -> AsyncStream<AppEvent> { await user.events() }
}
