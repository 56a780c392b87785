import CallRuntime
import IPCWire

/// Protocol 312 on a live link (PROTOCOL.md 8.6): the speaker (two-way talk) and the clarity
/// (main or sub stream). Taken only from the user whose link it is; every 312 gets a reply with
/// `resCode` 0 (done) or -1 (refused).
extension Device {
    func receiveStreamControl(_ message: StreamControlMessage) {
        let h = message.header
        guard h.to == devId else {
            refuse("dropped a 312 \(message.type.rawValue) addressed to '\(h.to)', not to this device", kind: .notForUs)
            return
        }
        guard let value = message.cmdValue else {
            refuseStreamControl(message, why: "a 312 reply means nothing to a device")
            return
        }
        let access = linkRules.control(sessionId: h.sessionId, from: h.from)
        if case .notOwner(let owner) = access {
            refuseStreamControl(message, why: "the link of session '\(h.sessionId)' is '\(owner)''s, not '\(h.from)''s")
            return
        }
        guard access == .owner, let link = links[h.sessionId] else {
            refuseStreamControl(message, why: "session '\(h.sessionId)' has no P2P link")
            return
        }
        switch message.type {
        case .speaker:
            guard value == 0 || value == 1 else {
                refuseStreamControl(message, why: "speaker cmdValue \(value) is not 0 or 1")
                return
            }
            link.setSpeaker(on: value == 1)
            log.log(.info, "<- 312 speaker", device: devId, fields: [("session", h.sessionId), ("on", String(value == 1))])
        case .resolution:
            guard let stream = message.streamType, template.profile.capabilities.video != nil else {
                refuseStreamControl(message, why: "resolution cmdValue \(value) names no stream of this profile (0 main, 1 sub)")
                return
            }
            do {
                _ = try link.switchStream(to: stream)
            } catch {
                refuseStreamControl(message, why: "the stream could not be switched: \(error)")
                return
            }
            log.log(.info, "<- 312 resolution", device: devId, fields: [("session", h.sessionId), ("stream", stream == .main ? "main" : "sub")])
        }
        replyStreamControl(message, resCode: StreamControlMessage.done)
    }

    private func refuseStreamControl(_ message: StreamControlMessage, why: String) {
        doorbellCounters.streamControlRefusals += 1
        refuse("refused 312 \(message.type.rawValue) from '\(message.header.from)': \(why)", kind: .streamControl)
        // PROTOCOL.md 3.4's reply limits apply to the -1 reply.
        if message.cmdValue != nil, admitRefusalReply(to: message.header.from) {
            replyStreamControl(message, resCode: StreamControlMessage.refused)
        }
    }

    private func replyStreamControl(_ message: StreamControlMessage, resCode: Int64) {
        var reply = message.reply(resCode: resCode)
        reply.header.from = devId
        publish(reply.envelope(t: clock.nowSeconds()), what: "312 reply")
    }
}
