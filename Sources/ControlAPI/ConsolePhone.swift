import AppSimulator
import CallEngine
import CallRuntime
import Emulator
import Foundation
import IPCWire
import MQTTTransport

/// The web console's phone panel: an app user run by the server (the "console user", a member of
/// the household), so a doorbell press rings the page. It waits for the operator (manual policy);
/// the page's Accept answers the call. Its events go to the same server-sent-event stream with
/// `"type":"phone"`.
///
/// Live video hook: once WebRTC lands, the answered session's offer/answer/candidates are relayed
/// between the page and the device through a WebSocket (`/api/phone/signal`, not served yet).
public actor ConsolePhone {
    public nonisolated let userId: String
    private let app: AppUser
    private let hub: EventHub
    private var pump: Task<Void, Never>?
    private var lastEnded: CallRecord?
    private var ringingFrom: String?

    /// - Parameter connection: the broker the devices use (the client id is made from the user id).
    public init(userId: String, connection: MQTTClientOptions, hub: EventHub, log: EventLog = EventLog(minimumLevel: .warning)) throws {
        self.userId = userId
        self.hub = hub
        self.app = try AppUser(userId: userId, connection: connection,
                               config: AppEngineConfig(userId: userId, incomingPolicy: .manual), log: log)
    }

    /// Connects and subscribes to every device's out topic.
    public func start(devices: [Device], timeout: Duration = .seconds(5)) async throws {
        let events = await app.events()
        try await app.start(timeout: timeout)
        for device in devices {
            let p = device.profile
            let t = p.resolvedTopics
            try await app.add(DeviceAddress(devId: device.devId, inTopic: t.in, outTopic: t.out, metaTopic: t.meta,
                                            security: p.security, localKey: p.identity.localKey,
                                            p2pPassword: p.identity.p2pPassword))
        }
        pump = Task { [weak self] in
            for await event in events { await self?.observe(event) }
        }
    }

    public func stop() async {
        pump?.cancel()
        await app.stop()
    }

    private func observe(_ event: AppEvent) async {
        switch event {
        case .incomingCall(_, let devId): ringingFrom = devId
        case .callEnded(let r):
            lastEnded = r
            ringingFrom = nil
        default: break
        }
        var o: [String: JSONValue] = ["type": .string("phone"), "user": .string(userId), "t": .int(WallClock.nowMs())]
        switch event {
        case .incomingCall(let s, let devId):
            o["what"] = .string("incomingCall"); o["session"] = .string(s); o["device"] = .string(devId)
        case .callEnded(let r):
            o["what"] = .string("callEnded"); o["record"] = JSONViews.record(r); o["session"] = .string(r.sessionId)
        case .received(let m, let devId):
            o["what"] = .string("received"); o["message"] = JSONViews.message(m); o["device"] = .string(devId)
        case .sent(let m, let devId):
            o["what"] = .string("sent"); o["message"] = JSONViews.message(m); o["device"] = .string(devId)
        case .deviceRinging(let s, let devId):
            o["what"] = .string("deviceRinging"); o["session"] = .string(s); o["device"] = .string(devId)
        case .connection(let connected, _):
            o["what"] = .string("connection"); o["connected"] = .bool(connected)
        case .refused(let why):
            o["what"] = .string("refused"); o["why"] = .string(why)
        case .signal:
            return
        }
        o["phone"] = await state()
        hub.publish(.object(o), device: nil)
    }

    /// `{"userId", "phase", "session", "ringingFrom", "lastCall"}`.
    public func state() async -> JSONValue {
        let session = await app.session
        let phase = await app.phase
        return .object([
            "userId": .string(userId),
            "phase": .string(phase.rawValue),
            "session": session.map(JSONViews.session) ?? .null,
            "ringingFrom": phase == .ringingIncoming ? (ringingFrom.map(JSONValue.string) ?? .null) : .null,
            "lastCall": lastEnded.map(JSONViews.record) ?? .null,
            "video": .string("unavailable"),
        ])
    }

    public func answer() async throws(CallActionError) { try await app.answer() }
    public func reject() async throws(CallActionError) { try await app.reject() }
    public func hangUp() async throws(CallActionError) { try await app.hangUp() }
}
