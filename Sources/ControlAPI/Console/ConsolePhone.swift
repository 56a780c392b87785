import AppSimulator
import CallEngine
import CallRuntime
import ControlAPISpec
import Emulator
import Foundation
import Synchronization
import IPCWire
import MQTTTransport
import WebRTCLink

/// The web console's phone panel: an app user run by the server (the "console user", a member of
/// the household), so a doorbell press rings the page. It waits for the operator (manual policy);
/// the page's Accept answers the call. Its events go to the same server-sent-event stream with
/// `"type":"phone"`.
///
/// Live video: the page's browser makes a WebRTC offer (ICE gathered, candidates in the SDP) and
/// hands it to `openVideo(offerSDP:)`. The app user sends it to the device as its 302 offer for the
/// answered session (`AppUser.openVideo` on a `BrowserLink`: the app's own 302 path and link rules),
/// the link collects the device's answer and candidates, and the answer goes back with the
/// candidates merged in (`SDPCandidates.merge`). No WebSocket: one request, one answer.
public actor ConsolePhone {
    public nonisolated let userId: String
    private let app: AppUser
    private let links = BrowserLinks()
    private let hub: EventHub
    private var pump: Task<Void, Never>?
    private var lastEnded: CallRecord?
    private var ringingFrom: String?
    private var devices: [String: Device] = [:]
    private var addresses: [String: DeviceAddress] = [:]
    /// The browser's video link of the answered call, if one was opened.
    private var video: (sessionId: String, devId: String, state: String)?
    /// The stream the browser's link was asked for (offer: main; then the HD/SD button's
    /// `resolution` messages, PROTOCOL.md 4).
    private var videoStream: StreamType = .main

    /// - Parameter connection: the broker the devices use (the client id is made from the user id).
    public init(userId: String, connection: MQTTClientOptions, hub: EventHub, log: EventLog = EventLog(minimumLevel: .warning)) throws {
        self.userId = userId
        self.hub = hub
        self.app = try AppUser(userId: userId, connection: connection,
                               config: AppEngineConfig(userId: userId, incomingPolicy: .manual), log: log, links: links)
    }

    /// Connects and subscribes to every device's out topic.
    public func start(devices: [Device], timeout: Duration = .seconds(5)) async throws {
        let events = await app.events()
        try await app.start(timeout: timeout)
        for device in devices {
            let p = device.profile
            let t = p.resolvedTopics
            let address = DeviceAddress(devId: device.devId, inTopic: t.in, outTopic: t.out, metaTopic: t.meta,
                                        security: p.security, localKey: p.identity.localKey,
                                        p2pPassword: p.identity.p2pPassword)
            try await app.add(address)
            addresses[device.devId] = address
            self.devices[device.devId] = device
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
            if video?.sessionId == r.sessionId { video = nil }
        case .signal(let m, let from):
            if case .disconnect = m.body, video?.sessionId == m.header.sessionId { video?.state = "closed" }
            // The app hands no end-of-candidates to a link; the browser's answer waits for it.
            if case .candidate(let c) = m.body, c.isEndOfCandidates, let v = video, v.devId == from,
               v.sessionId == m.header.sessionId {
                links.link(sessionId: v.sessionId)?.endOfCandidates()
            }
        default: break
        }
        var e = Components.Schemas.PhoneEvent(_type: .phone, user: userId, t: Int(clamping: WallClock.nowMs()),
                                              what: .connection, phone: placeholderState)
        switch event {
        case .incomingCall(let s, let devId):
            e.what = .incomingCall; e.session = s; e.device = devId
        case .callEnded(let r):
            e.what = .callEnded; e.record = APIViews.record(r); e.session = r.sessionId
        case .received(let m, let devId):
            e.what = .received; e.message = APIViews.message(m); e.device = devId
        case .sent(let m, let devId):
            e.what = .sent; e.message = APIViews.message(m); e.device = devId
        case .deviceRinging(let s, let devId):
            e.what = .deviceRinging; e.session = s; e.device = devId
        case .connection(let connected, _):
            e.what = .connection; e.connected = connected
        case .refused(let why):
            e.what = .refused; e.why = why
        case .signal, .doorbellPressed, .doorbellRinging, .doorbellSent, .doorbellReceived, .dpReport:
            return  // PROTOCOL.md 8 doorbell and DP events: not shown by the console phone yet
        }
        e.phone = await state()
        hub.publish(e, device: nil)
    }

    private var placeholderState: Components.Schemas.PhoneState {
        Components.Schemas.PhoneState(userId: userId, phase: .idle, video: .none)
    }

    /// The phone's state (openapi.yaml, PhoneState): phase, session, who rings, the last call, the
    /// browser's video link.
    package func state() async -> Components.Schemas.PhoneState {
        let session = await app.session
        let phase = await app.phase
        return Components.Schemas.PhoneState(
            userId: userId,
            phase: .init(rawValue: phase.rawValue) ?? .idle,
            session: session.map(APIViews.session),
            ringingFrom: phase == .ringingIncoming ? ringingFrom : nil,
            lastCall: lastEnded.map(APIViews.record),
            video: .init(rawValue: await videoState(session: session)) ?? .none,
            stream: videoStream == .sub ? .sub : .main)
    }

    /// `none` (no browser link for the answered call), `negotiating`, `connecting` (answer returned,
    /// the device's link not up yet), `up`, `lost`, `closed`. Up/lost are the device's view of the
    /// link when the device runs in this process; the app engine is told the same.
    private func videoState(session: CallSessionSnapshot?) async -> String {
        guard let video, let session, session.sessionId == video.sessionId, session.phase == .answered else { return "none" }
        guard video.state == "answered" else { return video.state }
        guard let device = devices[video.devId], let link = await device.status.session?.mediaLink,
              await device.status.session?.sessionId == video.sessionId else { return "connecting" }
        switch link {
        case .up:
            if session.mediaLink != .up { await app.mediaLink(up: true, sessionId: video.sessionId) }
            return "up"
        case .lost:
            if case .up? = session.mediaLink { await app.mediaLink(up: false, sessionId: video.sessionId) }
            return "lost"
        case .awaitingConnect: return "connecting"
        }
    }

    /// Sends the browser's offer to the device that this user answered (the app user's 302 offer:
    /// this user's `from`, the answered session, `auth` from the device's secrets) and returns the
    /// device's answer with every candidate it sent within `gather` after the answer (or until its
    /// end-of-candidates) merged in. Throws 409 (no answered call), 502 (the device refused:
    /// `disconnect`), 504 (no answer within `timeout`).
    public func openVideo(offerSDP: String, timeout: Duration = .seconds(8), gather: Duration = .milliseconds(1500)) async throws(ControlError) -> String {
        guard await app.phase == .answered, let session = await app.session else {
            throw ControlError(status: 409, "the console phone has no answered call to show video for")
        }
        guard let devId = session.answeredBy == userId ? session.peers.first : nil, addresses[devId] != nil else {
            throw ControlError(status: 409, "the console phone's call has no device it can reach")
        }
        let sid = session.sessionId
        video = (sid, devId, "negotiating")
        videoStream = .main
        links.offer(offerSDP, sessionId: sid)
        do {
            try await app.openVideo(streamType: .main, sessionId: sid, devId: devId)
        } catch {
            video = nil
            throw ControlError(status: 502, "cannot send the offer to \(devId): \(error)")
        }
        guard let link = links.link(sessionId: sid) else {
            video = nil
            throw ControlError(status: 502, "cannot send the offer to \(devId): no link")
        }
        let deadline = link.tell(.timedOut, after: timeout)
        var gathering: Task<Void, Never>?
        defer {
            deadline.cancel()
            gathering?.cancel()
        }
        for await progress in link.progress {
            let seen = link.snapshot
            if seen.closed, let reason = await app.disconnectReason(sessionId: sid) {
                video?.state = "refused"
                throw ControlError(status: 502, "the device refused the offer (disconnect, close_reason \(reason))")
            }
            if let answer = seen.answer {
                if gathering == nil { gathering = link.tell(.gathered, after: gather) }
                if seen.ended || progress == .gathered {
                    video?.state = "answered"
                    return SDPCandidates.merge(answer, candidates: seen.candidates)
                }
            } else if progress == .timedOut {
                video = nil
                throw ControlError(status: 504, "no answer from \(devId) within \(timeout)")
            }
        }
        video = nil
        throw ControlError(status: 504, "no answer from \(devId) within \(timeout)")
    }

    /// Closes the browser's link: tells the device (302 `disconnect`, close_reason 0). Nothing to
    /// close is not an error.
    public func closeVideo() async {
        guard let v = video else { return }
        video = nil
        await app.closeVideo(sessionId: v.sessionId, devId: v.devId, closeReason: 0)
    }

    /// The HD/SD button: PROTOCOL.md 4 `resolution` on the browser's live link, as this user (the
    /// one whose offer made it), switching the device's video to `stream`. No reply comes; the
    /// browser sees the new size on the same track. 409 without a link.
    public func switchStream(to stream: StreamType) async throws(ControlError) {
        guard let v = video, v.state != "closed", v.state != "refused" else {
            throw ControlError(status: 409, "the console phone has no video link to switch")
        }
        do {
            try await app.switchStream(sessionId: v.sessionId, devId: v.devId, to: stream)
        } catch {
            throw ControlError(status: 502, "cannot send resolution to \(v.devId): \(error)")
        }
        videoStream = stream
    }

    public func answer() async throws(CallActionError) { try await app.answer() }
    public func reject() async throws(CallActionError) { try await app.reject() }
    public func hangUp() async throws(CallActionError) { try await app.hangUp() }
}
