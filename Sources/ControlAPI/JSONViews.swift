import CallEngine
import Emulator
import Foundation
import IPCWire

/// The event stream's and the console phone's JSON objects (the API's responses use the generated
/// types: APIViews).
enum JSONViews {
    static func linkState(_ link: MediaLinkState?) -> String {
        switch link {
        case nil: "none"
        case .awaitingConnect: "connecting"
        case .up: "up"
        case .lost: "lost"
        }
    }

    static func session(_ s: CallSessionSnapshot) -> JSONValue {
        .object([
            "sessionId": .string(s.sessionId),
            "direction": .string(s.direction.rawValue),
            "phase": .string(s.phase.rawValue),
            "callType": .int(Int64(s.callType.rawValue)),
            "peers": .array(s.peers.map(JSONValue.string)),
            "activePeers": .array(s.activePeers.map(JSONValue.string)),
            "peersRinging": .array(s.peersRinging.map(JSONValue.string)),
            "answeredBy": s.answeredBy.map(JSONValue.string) ?? .null,
            "deadline": .int(s.deadline),
            "startedAt": .int(s.startedAt),
            "answeredAt": s.answeredAt.map(JSONValue.int) ?? .null,
            "mediaLink": .string(linkState(s.mediaLink)),
        ])
    }

    static func record(_ r: CallRecord) -> JSONValue {
        .object([
            "sessionId": .string(r.sessionId),
            "direction": .string(r.direction.rawValue),
            "peers": .array(r.peers.map(JSONValue.string)),
            "answeredBy": r.answeredBy.map(JSONValue.string) ?? .null,
            "callType": .int(Int64(r.callType.rawValue)),
            "startedAt": .int(r.startedAt),
            "answeredAt": r.answeredAt.map(JSONValue.int) ?? .null,
            "endedAt": .int(r.endedAt),
            "outcome": .string(r.outcome.rawValue),
            "endedBy": .string(r.endedBy.rawValue),
            "reason": r.reason.map { .string($0.rawValue) } ?? .null,
            "sdkError": r.sdkError.map { .int(Int64($0.rawValue)) } ?? .null,
        ])
    }

    static func message(_ m: CallMessage) -> JSONValue {
        var o: [String: JSONValue] = [
            "event": .string(m.event.rawValue), "curId": .string(m.curId), "targetId": .string(m.targetId),
            "sessionId": .string(m.sessionId),
        ]
        if let r = m.reason { o["reason"] = .string(r) }
        if let c = m.callType { o["callType"] = .int(Int64(c.rawValue)) }
        return .object(o)
    }

    /// One server-sent event: `{"type":..., "device":..., "t":..., ...}`.
    static func event(_ e: DeviceEvent, devId: String, at ms: Int64) -> JSONValue {
        var o: [String: JSONValue] = ["device": .string(devId), "t": .int(ms)]
        switch e {
        case .connection(let connected, let detail):
            o["type"] = .string("connection"); o["connected"] = .bool(connected); o["detail"] = .string(detail)
        case .received(let m):
            o["type"] = .string("received"); o["message"] = message(m); o["session"] = .string(m.sessionId)
        case .sent(let m):
            o["type"] = .string("sent"); o["message"] = message(m); o["session"] = .string(m.sessionId)
        case .ringing(let s):
            o["type"] = .string("ringing"); o["session"] = .string(s)
        case .ringingStopped(let s):
            o["type"] = .string("ringingStopped"); o["session"] = .string(s)
        case .callEnded(let r):
            o["type"] = .string("callEnded"); o["record"] = record(r); o["session"] = .string(r.sessionId)
        case .refused(let why):
            o["type"] = .string("refused"); o["why"] = .string(why)
        case .offerRefused(let s, let from, let why):
            o["type"] = .string("offerRefused"); o["session"] = .string(s); o["from"] = .string(from); o["why"] = .string(why)
        }
        return .object(o)
    }
}
