import CallEngine
import Emulator
import Foundation
import IPCWire
import ControlAPISpec

/// Engine and device values as the API's generated schema types (openapi.yaml, components).
enum APIViews {
    typealias S = Components.Schemas

    static func state(_ s: DeviceStatus, device: Device, faults f: DeviceFaults) -> S.DeviceState {
        let id = device.profile.identity
        let c = device.mqttCounters
        return S.DeviceState(
            devId: s.devId, name: id.name, category: id.category, connected: s.connected,
            phase: .init(rawValue: s.phase.rawValue) ?? .idle,
            session: s.session.map(session),
            peers: s.session?.peers ?? [],
            answerPolicy: policy(s.answerPolicy),
            actingBusy: s.actingBusy,
            callsEnded: s.callsEnded,
            lastCall: s.lastCall.map(record),
            household: device.profile.behaviour.household,
            faults: faults(f, actingBusy: s.actingBusy),
            media: .init(p2pLink: S.DeviceState.MediaPayload.P2pLinkPayload(rawValue: linkState(s.session?.mediaLink))
                             ?? S.DeviceState.MediaPayload.P2pLinkPayload.none,
                         framesSent: Int(clamping: s.media.framesSent), framesReceived: Int(clamping: s.media.framesReceived),
                         fps: (s.media.fps * 10).rounded() / 10, available: true, camera: camera(s.camera)),
            mqtt: .init(reconnects: Int(clamping: c.reconnects), messagesIn: Int(clamping: c.messagesIn),
                        messagesOut: Int(clamping: c.messagesOut))
        )
    }

    static func camera(_ c: CameraHealth) -> S.DeviceState.MediaPayload.CameraPayload {
        let (state, detail): (S.DeviceState.MediaPayload.CameraPayload.StatePayload, String?) =
            switch c.status {
            case nil, .stopped?: (.unknown, nil)
            case .live(let what)?: (.live, what)
            case .noVideo(let why)?: (.lost, why)
            }
        return .init(state: state, detail: detail, losses: Int(clamping: c.losses))
    }

    static func faults(_ f: DeviceFaults, actingBusy: Bool) -> S.Faults {
        S.Faults(heartbeatRepliesSuppressed: f.heartbeatRepliesSuppressed, replyDelayMs: Int(clamping: f.replyDelayMs),
                 actingBusy: actingBusy)
    }

    static func linkState(_ link: MediaLinkState?) -> String {
        switch link {
        case nil: "none"
        case .awaitingConnect: "connecting"
        case .up: "up"
        case .lost: "lost"
        }
    }

    static func session(_ s: CallSessionSnapshot) -> S.Session {
        S.Session(
            sessionId: s.sessionId, direction: .init(rawValue: s.direction.rawValue) ?? .incoming,
            phase: .init(rawValue: s.phase.rawValue) ?? .answered, callType: s.callType.rawValue,
            peers: s.peers, activePeers: s.activePeers, peersRinging: s.peersRinging, answeredBy: s.answeredBy,
            deadline: Int(clamping: s.deadline), startedAt: Int(clamping: s.startedAt),
            answeredAt: s.answeredAt.map { Int(clamping: $0) },
            mediaLink: S.Session.MediaLinkPayload(rawValue: linkState(s.mediaLink)) ?? S.Session.MediaLinkPayload.none
        )
    }

    static func record(_ r: CallRecord) -> S.CallRecord {
        S.CallRecord(
            sessionId: r.sessionId, direction: .init(rawValue: r.direction.rawValue) ?? .incoming, peers: r.peers,
            answeredBy: r.answeredBy, callType: r.callType.rawValue, startedAt: Int(clamping: r.startedAt),
            answeredAt: r.answeredAt.map { Int(clamping: $0) }, endedAt: Int(clamping: r.endedAt),
            outcome: .init(rawValue: r.outcome.rawValue) ?? .stopped, endedBy: .init(rawValue: r.endedBy.rawValue) ?? .local,
            reason: r.reason?.rawValue, sdkError: r.sdkError.map { Int($0.rawValue) }
        )
    }

    /// `answer`, `answer:1.5`, `reject`, `reject:2`, `ignore`, `busy`, `manual`.
    static func policy(_ p: AnswerPolicy) -> String {
        switch p {
        case .answerAfter(let ms): ms <= 0 ? "answer" : "answer:\(ControlMetrics.number(Double(ms) / 1000))"
        case .reject: "reject"
        case .rejectAfter(let ms): ms <= 0 ? "reject" : "reject:\(ControlMetrics.number(Double(ms) / 1000))"
        case .ignore: "ignore"
        case .busy: "busy"
        case .manual: "manual"
        }
    }

    /// A JSON value built elsewhere (the console phone's state, journal lines) read as `T`: a shape
    /// the schema does not allow is a server fault, reported as one.
    static func decode<T: Decodable>(_ value: JSONValue, as _: T.Type) throws(ControlError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(value.serialized()))
        } catch {
            throw ControlError(status: 500, "internal: \(T.self) does not match the API schema: \(error)")
        }
    }
}
