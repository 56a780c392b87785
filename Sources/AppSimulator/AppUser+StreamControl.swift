import CallEngine
import CallRuntime
import IPCWire

/// Speaker and clarity on a live link (PROTOCOL.md 8.6, protocol 312): the app sends the command
/// and waits for the device's reply, `resCode` 0 done or -1 refused.
extension AppUser {
    /// `speaker`: `on` plays this app's audio on the device's speaker (two-way talk), off stops.
    /// `sessionId`/`devId` default to the accepted doorbell call's. Returns the reply's `resCode`.
    /// - Throws: `AppError.noAnswer` when no reply came within `timeout`.
    @discardableResult
    public func speaker(on: Bool, sessionId: String? = nil, devId: String? = nil,
                        timeout: Duration = .seconds(3)) async throws(AppError) -> Int64 {
        try await streamControl(.speaker, value: on ? 1 : 0, sessionId: sessionId, devId: devId, timeout: timeout)
    }

    /// `resolution`: switches the link to the main (0) or sub (1) stream, as §4's `resolution`,
    /// and waits for the reply. Returns its `resCode`.
    /// - Throws: `AppError.noAnswer` when no reply came within `timeout`.
    @discardableResult
    public func resolution(_ stream: StreamType, sessionId: String? = nil, devId: String? = nil,
                           timeout: Duration = .seconds(3)) async throws(AppError) -> Int64 {
        try await streamControl(.resolution, value: Int64(stream.rawValue), sessionId: sessionId, devId: devId,
                                timeout: timeout)
    }

    /// Sends one 312 command with `cmdValue` `value` and waits for its reply's `resCode`.
    public func streamControl(_ type: StreamControlType, value: Int64, sessionId: String? = nil, devId: String? = nil,
                              timeout: Duration = .seconds(3)) async throws(AppError) -> Int64 {
        let call = answeredDoorbell
        guard let sid = sessionId ?? call?.sessionId else { throw .mqtt("no session for the 312 \(type.rawValue) (no accepted doorbell call)") }
        guard let target = devId ?? call?.peer else { throw .unknownDevice("?") }
        let header = SignalHeader(from: userId, to: target, sessionId: sid)
        let message = StreamControlMessage(type: type, header: header, body: .command(cmdValue: value))
        // The wait is registered before the command goes out: a reply cannot come before it.
        let token = doorbellSide.token()
        doorbellSide.replyWaits[token] = AppDoorbellSide.StreamControlWait(devId: target, type: type, sessionId: sid)
        do {
            try publish(message.envelope(t: clock.nowSeconds()), to: target)
        } catch {
            doorbellSide.replyWaits[token] = nil
            throw error
        }
        log.log(.info, "-> 312 \(type.rawValue) \(value)", device: userId, fields: [("devId", target), ("session", sid)])
        let timer = scheduler.schedule(after: timeout, on: clock) { [weak self] in await self?.endReplyWait(token) }
        defer { scheduler.cancel(timer) }
        let code: Int64? = await withCheckedContinuation { c in
            guard let wait = doorbellSide.replyWaits[token] else { return c.resume(returning: nil) }
            if let result = wait.result {
                doorbellSide.replyWaits[token] = nil
                return c.resume(returning: result)
            }
            doorbellSide.replyWaits[token]?.continuation = c
        }
        guard let code else { throw .noAnswer(what: "312 \(type.rawValue) reply from \(target)", seconds: timeout.secondsValue) }
        return code
    }

    private func endReplyWait(_ token: UInt64) {
        doorbellSide.replyWaits.removeValue(forKey: token)?.continuation?.resume(returning: nil)
    }

    /// A 312 on `devId`'s out topic: a reply to this user ends the oldest wait for that type and
    /// session. Commands (another app's) and other users' replies are not ours.
    func receiveStreamControl(_ m: StreamControlMessage, devId: String) {
        guard let code = m.resCode, m.header.to == userId, m.header.from == devId else { return }
        let waiting = doorbellSide.replyWaits
            .filter { $0.value.result == nil && $0.value.devId == devId && $0.value.type == m.type
                && $0.value.sessionId == m.header.sessionId }
            .min { $0.key < $1.key }
        guard let (token, wait) = waiting else {
            log.log(.debug, "ignored a 312 \(m.type.rawValue) reply nobody waits for", device: userId)
            return
        }
        if let continuation = wait.continuation {
            doorbellSide.replyWaits[token] = nil
            continuation.resume(returning: code)
        } else {
            doorbellSide.replyWaits[token]?.result = code
        }
    }
}
