import AppSimulator
import CallEngine
import CallRuntime
import ControlAPI
import DeviceProfile
import Emulator
import Foundation
import IPCWire
import MQTTTransport
import Testing
import TestSupport

/// Every control suite hangs under this one and runs one test at a time (shared 2-core machine).
@Suite("Control API over HTTP, real mosquitto", .serialized, .heavy)
struct ControlAPI {}

/// Collects an async stream's values as they come.
final class Recorder<E: Sendable>: @unchecked Sendable {
    private let box = Collected<[E]>([])
    private var task: Task<Void, Never>?

    init(_ stream: AsyncStream<E>) {
        let box = self.box
        task = Task { for await e in stream { box.withLock { $0.append(e) } } }
    }

    var all: [E] { box.snapshot }

    /// The first value (from index `after` on) for which `match` returns non-nil.
    func first<T>(after: Int = 0, within timeout: Duration = .seconds(5), _ match: (E) -> T?) async -> T? {
        let deadline = ContinuousClock.now + timeout
        while true {
            for e in all.dropFirst(after) { if let t = match(e) { return t } }
            if ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    deinit { task?.cancel() }
}

/// A real broker, one device from the shipped doorbell profile, the registry (journal in a temp
/// dir), optionally the console phone, and the control server on a free loopback port.
final class ControlFixture: @unchecked Sendable {
    let broker: MosquittoBroker
    let profile: DeviceProfile
    let device: Device
    let registry: DeviceRegistry
    let server: ControlServer
    let client: ControlHTTPClient
    let phone: ConsolePhone?
    let journalDir: TemporaryDirectory
    private let apps = Collected<[AppUser]>([])

    static let quiet = EventLog(minimumLevel: .error)

    var devId: String { profile.identity.devId }
    var base: String { "/api/devices/\(devId)" }

    init(edit: (inout DeviceProfile) -> Void = { _ in }, phone withPhone: Bool = false, token: String? = nil,
         feeds: VideoFeeds = .shared) async throws {
        broker = try await startBroker()
        var p = try DeviceProfile.load(path: packageRootPath + "/device-profiles/doorbell.yaml")
        edit(&p)
        profile = p
        device = try Device(profile: p, connection: broker.clientOptions(clientID: p.identity.devId), log: Self.quiet,
                            feeds: feeds)
        journalDir = try TemporaryDirectory(prefix: "ipcemu-control-test")
        registry = DeviceRegistry(journalDirectory: journalDir.path)
        try await registry.add(device)
        try await device.start()
        try #require(await device.waitUntilConnected(timeout: .seconds(5)))
        if withPhone, let user = p.behaviour.household.first {
            let ph = try ConsolePhone(userId: user, connection: broker.clientOptions(clientID: "console"), hub: registry.hub,
                                      log: Self.quiet)
            try await ph.start(devices: [device])
            phone = ph
        } else {
            phone = nil
        }
        server = try ControlServer(configuration: ControlServerConfiguration(host: "127.0.0.1", port: 0, token: token),
                                   registry: registry, phone: phone, log: Self.quiet)
        try await server.start()
        client = try ControlHTTPClient(baseURL: server.url, token: token)
    }

    /// A connected app user that reaches the device (added by address), with its events.
    func app(_ userId: String, config: AppEngineConfig? = nil) async throws -> (AppUser, Recorder<AppEvent>) {
        let app = try AppUser(userId: userId, connection: broker.clientOptions(clientID: userId), config: config, log: Self.quiet)
        let events = Recorder(await app.events())
        try await app.start()
        let t = profile.resolvedTopics
        try await app.add(DeviceAddress(devId: devId, inTopic: t.in, outTopic: t.out, metaTopic: t.meta,
                                        security: profile.security, localKey: profile.identity.localKey,
                                        p2pPassword: profile.identity.p2pPassword))
        apps.withLock { $0.append(app) }
        return (app, events)
    }

    // MARK: HTTP

    @discardableResult
    func request(_ method: String, _ path: String, _ json: JSONValue? = nil) async throws -> ControlHTTPReply {
        try await client.request(method, path, json: json)
    }

    /// The JSON object of a reply (empty if it is not one).
    static func object(_ r: ControlHTTPReply) -> [String: JSONValue] {
        if case .object(let o)? = r.json { return o }
        return [:]
    }

    func phase() async -> CallPhase { await device.status.phase }

    func waitForPhase(_ phase: CallPhase, within timeout: Duration = .seconds(5)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if await device.status.phase == phase { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return await device.status.phase == phase
    }

    func close() async {
        await server.stop()
        for app in apps.snapshot { await app.stop() }
        await phone?.stop()
        await device.stop()
        await registry.close()
        broker.stop()
    }
}

/// Runs `body` with a fresh fixture and always closes it.
func withControl(edit: (inout DeviceProfile) -> Void = { _ in }, phone: Bool = false, token: String? = nil,
                 feeds: VideoFeeds = .shared, _ body: (ControlFixture) async throws -> Void) async throws {
    let f = try await ControlFixture(edit: edit, phone: phone, token: token, feeds: feeds)
    do {
        try await body(f)
    } catch {
        await f.close()
        throw error
    }
    await f.close()
}

extension JSONValue {
    subscript(_ key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }
    var string: String? { if case .string(let s) = self { s } else { nil } }
    var int: Int64? { if case .int(let i) = self { i } else { nil } }
    var bool: Bool? { if case .bool(let b) = self { b } else { nil } }
    var array: [JSONValue]? { if case .array(let a) = self { a } else { nil } }
}

extension AppEvent {
    var ended: CallRecord? { if case .callEnded(let r) = self { r } else { nil } }
    var incoming: String? { if case .incomingCall(let s, _) = self { s } else { nil } }
}
