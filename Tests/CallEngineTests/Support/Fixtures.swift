import IPCWire
@testable import CallEngine

/// Shared names and builders for the engine tests.
let dev = "dev1"
let u1 = "u1"
let u2 = "u2"
let u3 = "u3"
/// A fixed start time (unix ms); every test moves forward from it.
let t0: Int64 = 1_732_200_000_000

/// A message as a peer (or the engine) sends it.
func msg(_ event: CallEvent, _ from: String, _ to: String, _ session: String = "s1",
         reason: StopReason? = nil) -> CallMessage {
    CallMessage(event: event, curId: from, targetId: to, sessionId: session, reason: reason?.rawValue)
}

/// A valid `call` from an app to the device.
func call(from user: String = u1, to target: String = dev, session: String = "s1",
          deadline: Int64 = t0 + 30_000, callType: CallType? = nil,
          extra: CallExtra? = CallExtra(category: "sp_dpsxj")) -> CallMessage {
    CallMessage(event: .call, curId: user, targetId: target, sessionId: session, timeout: deadline,
                callType: callType, extra: extra)
}

func timer(_ kind: CallTimer.Kind, _ session: String = "s1") -> CallTimer {
    CallTimer(kind, sessionId: session)
}

func deviceEngine(policy: AnswerPolicy = .manual, household: [String] = [u1, u2, u3],
                  channels: Set<ChannelType> = Set(ChannelType.allCases),
                  defaultCallType: CallType = .oneToOne) -> DeviceCallEngine {
    DeviceCallEngine(config: DeviceEngineConfig(devId: dev, supportedChannelTypes: channels, answerPolicy: policy,
                                                household: household, defaultCallType: defaultCallType))
}

func appEngine(_ user: String = u1, policy: AnswerPolicy = .manual, rings: Bool = true) -> AppCallEngine {
    AppCallEngine(config: AppEngineConfig(userId: user, incomingPolicy: policy, ringsOnIncomingCall: rings))
}

/// The messages among `effects`, in order.
func sent(_ effects: [CallEffect]) -> [CallMessage] {
    effects.compactMap { if case .send(let m) = $0 { m } else { nil } }
}

/// The record of the session that ended among `effects`, if one did.
func endedRecord(_ effects: [CallEffect]) -> CallRecord? {
    effects.lazy.compactMap { if case .callEnded(let r) = $0 { r } else { nil } }.first
}

/// The effects minus the record (compare the record separately).
func withoutRecord(_ effects: [CallEffect]) -> [CallEffect] {
    effects.filter { if case .callEnded = $0 { false } else { true } }
}

/// A device whose incoming call "s1" from u1 rings (manual policy), at t0.
func ringingDevice(policy: AnswerPolicy = .manual) -> DeviceCallEngine {
    var engine = deviceEngine(policy: policy)
    _ = engine.receive(call(), now: t0)
    return engine
}

/// A device that answered u1's call "s1" at t0 + 1000.
func answeredIncomingDevice() -> DeviceCallEngine {
    var engine = ringingDevice()
    _ = try? engine.perform(.answer, now: t0 + 1000)
    return engine
}

/// A deterministic generator for tests (SplitMix64).
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
