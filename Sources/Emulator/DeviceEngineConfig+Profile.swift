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
