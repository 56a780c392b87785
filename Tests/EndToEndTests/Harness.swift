import AppSimulator
import CallEngine
import CallRuntime
import DeviceProfile
import Emulator
import Foundation
import IPCWire
import MQTTTransport
import Testing
import TestSupport

/// A real mosquitto, one device from a profile, and app users, all on loopback.
final class CallHarness: @unchecked Sendable {
    let broker: MosquittoBroker
    let device: Device
    let profile: DeviceProfile
    private(set) var apps: [AppUser] = []

    static let quietLog = EventLog(minimumLevel: .error)

    /// - Parameter edit: changes to the shipped doorbell profile (answer policy, timers, security).
    init(profile name: String = "doorbell.yaml", edit: (inout DeviceProfile) -> Void = { _ in }) async throws {
        broker = try MosquittoBroker()
        var p = try DeviceProfile.load(path: Self.repoRoot + "/device-profiles/" + name)
        edit(&p)
        profile = p
        device = try Device(profile: p, connection: broker.clientOptions(clientID: p.identity.devId), log: Self.quietLog)
        try await device.start()
        #expect(await device.waitUntilConnected(timeout: .seconds(5)))
    }

    var address: DeviceAddress {
        let t = profile.resolvedTopics
        return DeviceAddress(devId: profile.identity.devId, inTopic: t.in, outTopic: t.out, metaTopic: t.meta,
                             security: profile.security, localKey: profile.identity.localKey,
                             p2pPassword: profile.identity.p2pPassword)
    }

    /// A connected app user that can reach the device.
    func app(_ userId: String, config: AppEngineConfig? = nil) async throws -> AppUser {
        let app = try AppUser(userId: userId, connection: broker.clientOptions(clientID: userId), config: config,
                              log: Self.quietLog)
        try await app.start()
        try await app.add(address)
        apps.append(app)
        return app
    }

    func close() async {
        for app in apps { await app.stop() }
        await device.stop()
        broker.stop()
    }

    static let repoRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url.path }
        }
        return FileManager.default.currentDirectoryPath
    }()
}

/// Collects an actor's events so a test can wait for one.
actor EventRecorder<Event: Sendable> {
    private(set) var events: [Event] = []
    private var task: Task<Void, Never>?

    init(_ stream: AsyncStream<Event>) {
        Task { await self.consume(stream) }
    }

    private func consume(_ stream: AsyncStream<Event>) async {
        for await e in stream { events.append(e) }
    }

    /// Waits until an event matches, returning it, or nil after `timeout`.
    func first<T>(within timeout: Duration = .seconds(5), _ match: @Sendable (Event) -> T?) async -> T? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            for e in events { if let m = match(e) { return m } }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return nil
    }
}

extension AppEvent {
    var endedRecord: CallRecord? { if case .callEnded(let r) = self { r } else { nil } }
    func receivedEvent(_ event: CallEvent) -> CallMessage? {
        if case .received(let m, _) = self, m.event == event { m } else { nil }
    }
}

extension DeviceEvent {
    var endedRecord: CallRecord? { if case .callEnded(let r) = self { r } else { nil } }
    func sentEvent(_ event: CallEvent) -> CallMessage? {
        if case .sent(let m) = self, m.event == event { m } else { nil }
    }
}
