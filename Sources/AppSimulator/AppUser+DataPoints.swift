import CallEngine
import CallRuntime
import Foundation
import IPCWire

/// Data points, app side (PROTOCOL.md 8.3): protocol 5 sets, protocol 31 queries, and protocol 4
/// reports kept in a per-device cache (`AppEvent.dpReport` for each), with waits for a value.
extension AppUser {
    /// Protocol 5: sets DPs of `devId`. The device reports every DP the message set (refused
    /// ones with their current value) and any DP that changed as a result. Returns once sent.
    public func setDPs(devId: String, _ values: [DPId: DPValue]) throws(AppError) {
        let set = DPSet(devId: devId, uid: userId, values: values)
        try publish(set.envelope(t: clock.nowSeconds()), to: devId)
        log.log(.info, "-> 5 dps", device: userId, fields: [("devId", devId), ("dps", set.envelopeData.jsonString)])
    }

    /// Protocol 31: asks `devId` to report `ids` (every DP when empty). Returns once sent.
    public func queryDPs(devId: String, ids: [DPId] = []) throws(AppError) {
        let query = DPQuery(devId: devId, uid: userId, dpIds: ids.isEmpty ? nil : ids)
        try publish(query.envelope(t: clock.nowSeconds()), to: devId)
        log.log(.info, "-> 31 query", device: userId, fields: [("devId", devId), ("dpIds", ids.map(String.init).joined(separator: ","))])
    }

    /// The last value `devId` reported for each DP (empty before its first report).
    public func dps(devId: String) -> [DPId: DPValue] { doorbellSide.dps[devId] ?? [:] }

    /// The last value `devId` reported for DP `id`, if any.
    public func dp(devId: String, _ id: DPId) -> DPValue? { doorbellSide.dps[devId]?[id] }

    /// Waits until `devId` has reported DP `id` (with `value`, when given): at once when the
    /// cache already holds it, else until a report brings it. Returns the value.
    /// - Throws: `AppError.noAnswer` when no such report came within `timeout`.
    @discardableResult
    public func waitForDP(devId: String, _ id: DPId, value: DPValue? = nil,
                          timeout: Duration = .seconds(5)) async throws(AppError) -> DPValue {
        if let now = dp(devId: devId, id), value == nil || now == value { return now }
        return try await nextDPReport(devId: devId, id, value: value, timeout: timeout)
    }

    /// Waits for the next report (from now on, the cache aside) of DP `id` by `devId` (with
    /// `value`, when given).
    /// - Throws: `AppError.noAnswer` when none came within `timeout`.
    @discardableResult
    public func nextDPReport(devId: String, _ id: DPId, value: DPValue? = nil,
                             timeout: Duration = .seconds(5)) async throws(AppError) -> DPValue {
        try await finishDPWait(beginDPWait(devId: devId, id, value: value), timeout: timeout)
    }

    /// Starts waiting for a report (before sending what causes it); `finishDPWait` awaits it.
    func beginDPWait(devId: String, _ id: DPId, value: DPValue?) -> UInt64 {
        let token = doorbellSide.token()
        doorbellSide.dpWaits[token] = AppDoorbellSide.DPWait(devId: devId, id: id, value: value)
        return token
    }

    /// The value of the report `token` waits for, as soon as it is there (within `timeout`).
    func finishDPWait(_ token: UInt64, timeout: Duration) async throws(AppError) -> DPValue {
        guard let wait = doorbellSide.dpWaits[token] else { throw .noAnswer(what: "a DP report (the app stopped)", seconds: 0) }
        if let result = wait.result {
            doorbellSide.dpWaits[token] = nil
            return result
        }
        let timer = scheduler.schedule(after: timeout, on: clock) { [weak self] in await self?.endDPWait(token) }
        let got = await withCheckedContinuation { (c: CheckedContinuation<DPValue?, Never>) in
            if doorbellSide.dpWaits[token] == nil {
                c.resume(returning: nil)
            } else {
                doorbellSide.dpWaits[token]?.continuation = c
            }
        }
        scheduler.cancel(timer)
        guard let got else {
            let what = "report of DP \(wait.id)" + (wait.value.map { " = \($0)" } ?? "") + " from \(wait.devId)"
            throw .noAnswer(what: what, seconds: timeout.secondsValue)
        }
        return got
    }

    private func endDPWait(_ token: UInt64) {
        doorbellSide.dpWaits.removeValue(forKey: token)?.continuation?.resume(returning: nil)
    }

    /// A protocol 4 report from `devId`'s out topic: into the cache, out as an event, to the waits.
    func receiveDPReport(_ report: DPReport, devId: String) {
        guard report.devId == devId else {
            refuseDoorbellSide("4 on \(devId)'s topic names device '\(report.devId)'")
            return
        }
        var values: [DPId: DPValue] = [:]
        for entry in report.dps { values[entry.id] = entry.value }
        doorbellSide.dps[devId, default: [:]].merge(values) { _, new in new }
        emit(.dpReport(devId: devId, dps: values))
        var woken: [(CheckedContinuation<DPValue?, Never>, DPValue)] = []
        for (token, wait) in doorbellSide.dpWaits where wait.result == nil {
            guard let value = values[wait.id], wait.matches(devId: devId, id: wait.id, value: value) else { continue }
            if let continuation = wait.continuation {
                doorbellSide.dpWaits.removeValue(forKey: token)
                woken.append((continuation, value))
            } else {
                doorbellSide.dpWaits[token]?.result = value
            }
        }
        for (continuation, value) in woken { continuation.resume(returning: value) }
    }

    /// The app stops: every pending wait ends (DP waits and wakes with a timeout error, 312
    /// commands with no reply).
    func endDoorbellWaits() {
        let dpWaits = doorbellSide.dpWaits.values
        let replyWaits = doorbellSide.replyWaits.values
        doorbellSide.dpWaits.removeAll()
        doorbellSide.replyWaits.removeAll()
        for wait in dpWaits { wait.continuation?.resume(returning: nil) }
        for wait in replyWaits { wait.continuation?.resume(returning: nil) }
    }
}

extension Duration {
    /// The duration in seconds (for `AppError.noAnswer`).
    var secondsValue: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
