import CallRuntime
import IPCWire
import MQTTTransport

/// Fault injection (QA: what the app sees when the device misbehaves), and the small types the
/// device keeps.
extension Device {
    /// Replace the faults in force (heartbeat replies, reply delay). Acting busy goes through the
    /// engine (`setActingBusy`); a dropped connection through `dropConnection(for:)`.
    /// `logLevel`: of this device's line (a fleet-wide fault logs one summary line itself and
    /// each device's at debug).
    public func setFaults(_ faults: DeviceFaults, logLevel: LogLevel = .warning) {
        self.faults = faults
        log.log(logLevel, "faults set", device: devId, fields: [
            ("heartbeatRepliesSuppressed", String(faults.heartbeatRepliesSuppressed)),
            ("replyDelayMs", String(faults.replyDelayMs)),
        ])
    }

    /// Drops the MQTT connection without a DISCONNECT (the broker publishes the last will) and
    /// reconnects after `seconds` plus a random share of `jitterSeconds` (a fleet-wide reconnect
    /// storm spreads its reconnects this way).
    /// `logLevel`: of this device's lines about the drop, the lost connection included (a
    /// fleet-wide storm logs one summary line itself and each device's at debug).
    public func dropConnection(for seconds: Double, jitterSeconds: Double = 0, logLevel: LogLevel = .warning) {
        log.log(logLevel, "fault: dropping the MQTT connection", device: devId, fields: [("seconds", String(seconds))])
        droppedOnPurpose = logLevel
        client.disconnectAbruptly(reconnect: false)
        let client = self.client
        let base = seconds.isFinite ? min(max(0, seconds), 86_400) : 0
        let spread = jitterSeconds.isFinite ? min(max(0, jitterSeconds), 3_600) : 0
        let delay = base + (spread > 0 ? Double.random(in: 0...spread, using: &random) : 0)
        scheduler.schedule(after: .milliseconds(WallClock.milliseconds(seconds: delay)), on: clock) { client.connect() }
    }

    /// Drops the MQTT connection without a DISCONNECT (the broker publishes the last will) and does
    /// not reconnect: the caller does (`Fleet`'s reconnect storm paces every reconnect per broker).
    public func dropConnectionForStorm(logLevel: LogLevel = .debug) {
        log.log(logLevel, "fault: dropping the MQTT connection", device: devId, fields: [("reconnect", "paced by the fleet")])
        // The level only changes the line of the drop; when not even a warning is logged there is
        // no line to change, and no `DeviceActivity` is made for it (a storm drops every device).
        if log.minimumLevel <= .warning { droppedOnPurpose = logLevel }
        // Not ready from now on: the storm's wait for it (`waitUntilConnected`) must wait for the
        // next connection, even before the device has seen this one end.
        markNotReady()
        client.disconnectAbruptly(reconnect: false)
    }
}


/// A link's generation in `P2PLinkRules` and its connect-timeout reaper (nil once it is up).
struct LinkTimer: Sendable {
    var generation: UInt64
    var reaper: TimerToken?
}

/// Faults a QA run can inject into a device.
public struct DeviceFaults: Sendable, Equatable {
    /// Do not answer the app's heartbeats (the app ends the call with -2532).
    public var heartbeatRepliesSuppressed = false
    /// Publish every reply this many milliseconds late.
    public var replyDelayMs: Int64 = 0

    public init(heartbeatRepliesSuppressed: Bool = false, replyDelayMs: Int64 = 0) {
        self.heartbeatRepliesSuppressed = heartbeatRepliesSuppressed
        self.replyDelayMs = replyDelayMs
    }
}

/// How a device runs on Tuya's cloud (PROTOCOL.md 9.4).
public struct DeviceCloudOptions: Sendable, Equatable {
    /// The DP ids of the product's schema that activation returned: a profile DP outside it is
    /// warned about once and never sent (issue 21). Nil: no schema, every DP is sent.
    public var schemaDataPoints: Set<DPId>?

    public init(schemaDataPoints: Set<DPId>?) {
        self.schemaDataPoints = schemaDataPoints
    }
}
