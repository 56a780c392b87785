import CallEngine
import CallRuntime
import Foundation
import IPCWire
import MQTTTransport

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
    /// An awake device ignores a wake (it only counts as activity) and reports nothing. So the app
    /// first looks at what it knows: the DP 149 it last saw, else the device's retained meta
    /// (`"awake"`, read once, up to `metaWait`). Asleep: only the wake goes out. Awake, or not
    /// known: the app also asks for DP 149 (protocol 31) right after the wake; an awake device
    /// answers at once, a sleeping one drops (and counts) the query and reports DP 149 `true`
    /// once awake.
    /// - Throws: `AppError.noAnswer` when no DP 149 `true` came within `timeout`.
    @discardableResult
    public func wake(devId: String, timeout: Duration = .seconds(10),
                     metaWait: Duration = .milliseconds(500)) async throws(AppError) -> DoorbellWake {
        guard let channel = devices[devId] else { throw .unknownDevice(devId) }
        let awake = DataPointCatalogue.awake
        let known = try await knownAwake(devId: devId, metaWait: metaWait)
        let topic = WakeCheck.topic(devId: devId)
        let payload = WakeCheck.payload(localKey: Array(channel.address.localKey.utf8))
        let started = clock.nowMs()
        let wait = beginDPWait(devId: devId, awake, value: .bool(true))
        do {
            try client.publish(topic: topic, payload: payload, qos: 1, retain: false)
        } catch {
            doorbellSide.dpWaits[wait] = nil
            throw .mqtt("publish to \(topic): \(error)")
        }
        log.log(.info, "-> wake", device: userId, fields: [("devId", devId), ("topic", topic)])
        if known != false { try? queryDPs(devId: devId, ids: [awake]) }
        _ = try await finishDPWait(wait, timeout: timeout)
        let (elapsed, overflow) = clock.nowMs().subtractingReportingOverflow(started)
        return DoorbellWake(latency: .milliseconds(overflow ? 0 : max(0, elapsed)), wasAwake: known == true)
    }

    /// PROTOCOL.md 8.4: whether `devId` is awake as far as the app knows: the DP 149 it last saw,
    /// else its retained meta's `awake` (read within `metaWait`); nil when neither says (a device
    /// that is not low-power leaves `awake` out of its meta).
    public func awakeState(devId: String, metaWait: Duration = .milliseconds(500)) async throws(AppError) -> Bool? {
        try await knownAwake(devId: devId, metaWait: metaWait)
    }

    /// Awake or asleep as far as the app knows: the DP 149 it last saw, else the retained meta's
    /// `awake` (subscribed to once; later metas keep it current); nil when neither says.
    func knownAwake(devId: String, metaWait: Duration) async throws(AppError) -> Bool? {
        if case .bool(let b)? = dp(devId: devId, DataPointCatalogue.awake) { return b }
        guard let channel = devices[devId] else { return nil }
        let meta = channel.address.metaTopic
        if doorbellSide.metaTopics[meta] == nil {
            doorbellSide.metaTopics[meta] = devId
            do {
                try await client.subscribeAndWait(meta, qos: 1, timeout: .seconds(5))
            } catch {
                throw .mqtt("subscribe \(meta): \(error)")
            }
        }
        // Woken by the meta (`receiveMeta`) or by the timeout on the injected scheduler.
        if doorbellSide.metaAwake[devId] == nil {
            let token = doorbellSide.token()
            metaWaits[token] = MetaWait(devId: devId)
            let timer = scheduler.schedule(after: metaWait, on: clock) { [weak self] in await self?.endMetaWait(token) }
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                if doorbellSide.metaAwake[devId] != nil || metaWaits[token] == nil {
                    c.resume()
                } else {
                    metaWaits[token]?.continuation = c
                }
            }
            metaWaits[token] = nil
            scheduler.cancel(timer)
        }
        return doorbellSide.metaAwake[devId]
    }

    func endMetaWait(_ token: UInt64) {
        metaWaits.removeValue(forKey: token)?.continuation?.resume()
    }

    /// A message on a meta topic the app watches (PROTOCOL.md 5: always plain): keeps its `awake`.
    /// False for any other topic.
    func receiveMeta(_ message: MQTTMessage) -> Bool {
        guard let devId = doorbellSide.metaTopics[message.topic] else { return false }
        guard let envelope = try? Envelope.decode(message.payload),
              case .abilityAnswer(let meta)? = try? InboundMessage.decode(envelope) else {
            log.log(.debug, "ignored a meta on \(message.topic) that does not decode", device: userId)
            return true
        }
        if let awake = meta.awake {
            doorbellSide.metaAwake[devId] = awake
            for (token, wait) in metaWaits where wait.devId == devId { endMetaWait(token) }
        }
        return true
    }
}

/// A wait for a device's retained meta to say whether it is awake (`knownAwake`).
struct MetaWait {
    var devId: String
    var continuation: CheckedContinuation<Void, Never>?
}
