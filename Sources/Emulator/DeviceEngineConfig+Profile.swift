import CallEngine
import DeviceProfile
import IPCWire

extension DeviceEngineConfig {
    /// The call engine's configuration for a device profile: identity, capabilities, answer
    /// policy, household, timers (seconds in the profile, milliseconds in the engine).
    public init(profile: DeviceProfile) {
        let b = profile.behaviour
        let t = profile.timers
        self.init(
            devId: profile.identity.devId,
            supportedChannelTypes: Set(profile.capabilities.channelTypes),
            answerPolicy: AnswerPolicy(profile: b.answerPolicy),
            household: b.household,
            defaultCallType: b.callType,
            defaultCallTimeoutMs: Self.ms(b.callTimeout),
            heartbeatIntervalMs: Self.ms(t.heartbeatInterval),
            heartbeatTimeoutMs: Self.ms(t.heartbeatTimeout),
            connectTimeoutMs: Self.ms(t.connectTimeout),
            category: profile.identity.category,
            outgoingChannelType: b.channelType)
    }

    static func ms(_ seconds: Double) -> Int64 { Int64((seconds * 1000).rounded()) }
}

extension AnswerPolicy {
    /// The engine's policy for the profile's `answerPolicy`.
    public init(profile policy: DeviceProfile.AnswerPolicy) {
        switch policy {
        case .answer(let seconds): self = .answerAfter(ms: DeviceEngineConfig.ms(seconds))
        case .reject: self = .reject
        case .rejectAfter(let seconds): self = .rejectAfter(ms: DeviceEngineConfig.ms(seconds))
        case .ignore: self = .ignore
        case .busy: self = .busy
        case .manual: self = .manual
        }
    }
}

extension DeviceSideEngine {
    /// The device's call engine for its profile's `doorbell.kind` (PROTOCOL.md 8): the §3 engine
    /// for `screen_ipc`, the doorbell machine for `ac_doorbell` and `doorbell`.
    public init(profile: DeviceProfile) {
        if profile.doorbell.kind.isTuyaDoorbell {
            self.init(doorbell: DoorbellEngineConfig(profile: profile))
        } else {
            self.init(screenIPC: DeviceEngineConfig(profile: profile))
        }
    }
}

extension DoorbellEngineConfig {
    /// The doorbell machine's configuration for a profile (PROTOCOL.md 8.2, 8.5; seconds in the
    /// profile, milliseconds here).
    public init(profile: DeviceProfile) {
        let d = profile.doorbell
        let t = profile.timers
        self.init(devId: profile.identity.devId, kind: d.kind.rawValue, household: profile.behaviour.household,
                  ringTimeoutMs: d.ringTimeoutMs, heartbeatTimeoutMs: DeviceEngineConfig.ms(t.heartbeatTimeout),
                  connectTimeoutMs: DeviceEngineConfig.ms(t.connectTimeout), messagesEnabled: d.messages,
                  messageWindowMs: d.messageWindowMs)
    }
}

extension PowerConfig {
    /// The power machine's configuration for a profile (PROTOCOL.md 8.4).
    public init(profile: DeviceProfile) {
        let p = profile.power
        self.init(devId: profile.identity.devId, lowPower: p.lowPower, sleepAfterMs: p.sleepAfterMs,
                  wakeLatencyMs: p.wakeLatencyMs, onBattery: p.source == .battery, battery: p.battery,
                  drainPerStreamMinute: p.drainPerStreamMinute, lowBatteryThreshold: p.lowBatteryThreshold,
                  dpIds: Set(profile.dataPoints.ids))
    }
}
