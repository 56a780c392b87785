import CallEngine
import CallRuntime
import Foundation
import IPCWire

/// What a wake came to (PROTOCOL.md 8.4).
public struct DoorbellWake: Sendable, Equatable {
    /// From the wake's publish to the report of DP 149 `true` (as the app saw it).
    public var latency: Duration
    /// The app's cache said the device was awake already (DP 149 `true` last reported): the wake
    /// was sent, and the report awaited came from a query of DP 149 instead.
    public var wasAwake: Bool

    public init(latency: Duration, wasAwake: Bool) {
        self.latency = latency
        self.wasAwake = wasAwake
    }

    /// The latency in milliseconds, for printing.
    public var milliseconds: Double {
        Double(latency.components.seconds) * 1000 + Double(latency.components.attoseconds) / 1e15
    }
}

extension AppUser {
    /// PROTOCOL.md 8.4: wakes a sleeping battery doorbell the way go2rtc does: publishes the
    /// 4-byte big-endian CRC32 of its localKey on `m/w/{devId}` (QoS 1, not retained, not sealed:
    /// the wake topic is not the in topic), then waits for DP 149 `true` and returns how long
    /// that took.
    ///
    /// An awake device ignores a wake (it only counts as activity) and reports nothing, so when
    /// the app's cache does not say the device sleeps (DP 149 `false` last reported), the app
    /// also asks for DP 149 (protocol 31) right after the wake: an awake device answers at once,
    /// a sleeping one drops (and counts) the query and reports DP 149 `true` once awake.
    /// - Throws: `AppError.noAnswer` when no DP 149 `true` came within `timeout`.
    @discardableResult
    public func wake(devId: String, timeout: Duration = .seconds(10)) async throws(AppError) -> DoorbellWake {
        guard let channel = devices[devId] else { throw .unknownDevice(devId) }
        let awake = DataPointCatalogue.awake
        let cached = dp(devId: devId, awake)
        let topic = WakeCheck.topic(devId: devId)
        let payload = WakeCheck.payload(localKey: Array(channel.address.localKey.utf8))
        let started = ContinuousClock.now
        let wait = beginDPWait(devId: devId, awake, value: .bool(true))
        do {
            try client.publish(topic: topic, payload: payload, qos: 1, retain: false)
        } catch {
            doorbellSide.dpWaits[wait] = nil
            throw .mqtt("publish to \(topic): \(error)")
        }
        log.log(.info, "-> wake", device: userId, fields: [("devId", devId), ("topic", topic)])
        if cached != .bool(false) { try? queryDPs(devId: devId, ids: [awake]) }
        _ = try await finishDPWait(wait, timeout: timeout)
        return DoorbellWake(latency: ContinuousClock.now - started, wasAwake: cached == .bool(true))
    }
}
