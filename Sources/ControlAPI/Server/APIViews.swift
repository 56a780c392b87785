import CallEngine
import Emulator
import Foundation
import IPCWire
import ControlAPISpec
import OpenAPIRuntime

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

    /// A 308 call event as the event stream shows it.
    static func message(_ m: CallMessage) -> S.CallEventMessage {
        S.CallEventMessage(event: m.event.rawValue, curId: m.curId, targetId: m.targetId, sessionId: m.sessionId,
                           reason: m.reason, callType: m.callType.map { Int($0.rawValue) })
    }

    /// One `data:` line of /api/events for a device's event (openapi.yaml, DeviceEvent).
    static func event(_ e: DeviceEvent, devId: String, at ms: Int64) -> S.DeviceEvent {
        var event = S.DeviceEvent(_type: .connection, device: devId, t: Int(clamping: ms))
        switch e {
        case .connection(let connected, let detail):
            event.connected = connected
            event.detail = detail
        case .received(let m):
            event._type = .received
            event.message = message(m)
            event.session = m.sessionId
        case .sent(let m):
            event._type = .sent
            event.message = message(m)
            event.session = m.sessionId
        case .ringing(let s):
            event._type = .ringing
            event.session = s
        case .ringingStopped(let s):
            event._type = .ringingStopped
            event.session = s
        case .callEnded(let r):
            event._type = .callEnded
            event.record = record(r)
            event.session = r.sessionId
        case .refused(let why):
            event._type = .refused
            event.why = why
        case .offerRefused(let s, let from, let why):
            event._type = .offerRefused
            event.session = s
            event.from = from
            event.why = why
        case .receivedDoorbell(let m):
            event._type = .doorbellReceived
            event.doorbell = doorbell(m)
            event.session = m.eData
        case .sentDoorbell(let m):
            event._type = .doorbellSent
            event.doorbell = doorbell(m)
            event.session = m.eData
        case .pressed(let callId):
            event._type = .pressed
            event.session = callId
        case .dataPointsReported(let entries):
            event._type = .dataPoints
            event.dps = dataPoints(entries)
        case .fellAsleep:
            event._type = .asleep
        case .wokeUp(let latencyMs):
            event._type = .awake
            event.latencyMs = Int(clamping: latencyMs)
        case .mediaStored(let name, let path):
            event._type = .mediaStored
            event.name = name
            event.path = path
        }
        return event
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

    static func journalEntry(_ e: JournalEntry) -> S.JournalEntry {
        var entry = S.JournalEntry(
            t: Int(clamping: e.t), time: e.time, device: e.device, kind: .init(rawValue: e.kind.rawValue) ?? .event,
            session: e.session, direction: e.direction, event: e.event, peer: e.peer, reason: e.reason,
            callType: e.callType, outcome: e.outcome, endedBy: e.endedBy, peers: e.peers, answeredBy: e.answeredBy,
            startedAt: e.startedAt.map { Int(clamping: $0) }, answeredAt: e.answeredAt.map { Int(clamping: $0) },
            endedAt: e.endedAt.map { Int(clamping: $0) })
        entry.doorbellKind = e.doorbellKind
        entry.latencyMs = e.latencyMs.map { Int(clamping: $0) }
        entry.path = e.path
        entry.durationSeconds = e.durationSeconds
        return entry
    }
}

extension APIViews {
    /// A `video_doorbell` message as the event stream shows it (PROTOCOL.md 8.2).
    static func doorbell(_ m: VideoDoorbellMessage) -> S.DeviceEvent.DoorbellPayload {
        var fields: [String: String] = ["devId": m.devId, "event": m.event.rawValue, "eData": m.eData]
        if let uid = m.uid { fields["uid"] = uid }
        if let reason = m.reason { fields["reason"] = reason }
        return S.DeviceEvent.DoorbellPayload(additionalProperties: fields)
    }

    /// Reported DPs by id (a decimal string), each value as its JSON kind (PROTOCOL.md 8.3).
    static func dataPoints(_ entries: [DPEntry]) -> S.DeviceEvent.DpsPayload {
        var fields: [String: OpenAPIValueContainer] = [:]
        for entry in entries {
            switch entry.value {
            case .bool(let b): fields[String(entry.id)] = OpenAPIValueContainer(booleanLiteral: b)
            case .int(let i): fields[String(entry.id)] = OpenAPIValueContainer(integerLiteral: Int(clamping: i))
            case .string(let s): fields[String(entry.id)] = OpenAPIValueContainer(stringLiteral: s)
            }
        }
        return S.DeviceEvent.DpsPayload(additionalProperties: fields)
    }
}
