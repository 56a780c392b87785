/// One line per event, as the wait helpers' failure messages and `ipcemu`'s log show them.
enum EventText {
    static func message(_ arrow: String, _ m: CallMessage, peer: String) -> String {
        var text = "\(arrow) \(m.event.rawValue) session=\(m.sessionId) \(peer)"
        if let reason = m.reason { text += " reason=\(reason)" }
        return text
    }

    static func record(_ r: CallRecord) -> String {
        var text = "call ended \(r.outcome.rawValue) session=\(r.sessionId)"
        if let reason = r.reason { text += " reason=\(reason.rawValue)" }
        if let error = r.sdkError { text += " sdkError=\(error.rawValue)" }
        return text
    }

    static func doorbell(_ arrow: String, _ m: VideoDoorbellMessage) -> String {
        var text = "\(arrow) video_doorbell \(m.event.rawValue) call=\(m.eData) devId=\(m.devId)"
        if let uid = m.uid { text += " uid=\(uid)" }
        if let reason = m.reason { text += " reason=\(reason)" }
        return text
    }

    static func device(_ e: DeviceEvent) -> String {
        switch e {
        case .connection(let connected, let detail): connected ? "connected" : "disconnected (\(detail))"
        case .received(let m): message("<-", m, peer: "from=\(m.curId)")
        case .sent(let m): message("->", m, peer: "to=\(m.targetId)")
        case .ringing(let s): "ringing session=\(s)"
        case .ringingStopped(let s): "ringing stopped session=\(s)"
        case .callEnded(let r): record(r)
        case .refused(let why): "refused: \(why)"
        case .offerRefused(let s, let from, let why): "offer refused session=\(s) from=\(from): \(why)"
        case .receivedDoorbell(let m): doorbell("<-", m)
        case .sentDoorbell(let m): doorbell("->", m)
        case .pressed(let callId): "-> 43 press call=\(callId)"
        case .dataPointsReported(let dps): "-> 4 dps " + dps.map { "\($0.id)=\($0.value)" }.joined(separator: ",")
        case .fellAsleep: "asleep"
        case .wokeUp(let latencyMs): "awake after \(latencyMs) ms"
        case .mediaStored(let name, let path): "stored \(name) at \(path)"
        }
    }

    static func app(_ e: AppEvent) -> String {
        switch e {
        case .connection(let connected, let detail): connected ? "connected" : "disconnected (\(detail))"
        case .sent(let m, let devId): message("->", m, peer: "to=\(devId)")
        case .received(let m, let devId): message("<-", m, peer: "from=\(devId)")
        case .incomingCall(let s, let devId): "incoming call session=\(s) from=\(devId)"
        case .deviceRinging(let s, let devId): "device ringing session=\(s) devId=\(devId)"
        case .callEnded(let r): record(r)
        case .refused(let why): "refused: \(why)"
        case .signal(let s, let devId): "<- 302 \(s.type.rawValue) session=\(s.header.sessionId) from=\(devId)"
        case .doorbellPressed(let p): "<- 43 press call=\(p.edata) from=\(p.devId)"
        case .doorbellRinging(let devId, let callId, _): "doorbell ringing call=\(callId) from=\(devId)"
        case .doorbellSent(let m): doorbell("->", m)
        case .doorbellReceived(let m): doorbell("<-", m)
        case .dpReport(let devId, let dps): "<- 4 dps from=\(devId) " + dps.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
        }
    }
}
