/// Everything that can happen to a join machine (PROTOCOL.md 9). Time is not part of the input:
/// every `handle` call takes `now` (unix milliseconds) beside it, as the call engines do.
public enum CloudJoinInput: Sendable, Equatable {
    /// Begin, with the state file's content (nil when there is none, or it was unreadable).
    case start(CloudState?)
    /// The runner got an answer to `HTTPSRequest` `id`, whatever its status (the SDK reads the body
    /// whatever the status is).
    case httpsAnswered(id: UInt64, status: Int, body: [UInt8])
    /// The request could not be made or answered: DNS, TCP, TLS (a certificate that does not verify
    /// against the pinned CA), timeout, or an answer larger than the request's limit.
    case httpsFailed(id: UInt64, why: String)
    /// The MQTT link asked for by the last `.mqttConnect` is up (CONNACK 0) and subscribed.
    case mqttConnected
    /// The broker answered CONNACK with a refusal code (1-5).
    case mqttConnackRefused(code: UInt8)
    /// The link could not be made (DNS, TCP, TLS handshake or certificate) before any CONNACK.
    case mqttConnectFailed(why: String)
    /// The link that was up went down (not after our own `.mqttDisconnect`).
    case mqttDisconnected(why: String)
    /// A message arrived on the direct link's `d/ai/<uuid>` topic.
    case tokenMessage([UInt8])
    /// A message arrived on `rpc/rsp/<devId>`.
    case rpcAnswer([UInt8])
    /// A timer the machine armed with `CloudJoinEffect.armTimer` is due.
    case timerFired(CloudJoinTimer)
    /// The operator unpairs the device (`ipcemu cloud unpair`, the SDK's `tuya_iot_reset`).
    case unpair
}

/// The machine's timers; arming one that is armed replaces it.
public enum CloudJoinTimer: String, Sendable, Equatable, Hashable, CaseIterable {
    /// The end of a backoff: retry the step that failed.
    case retry
    /// The upgrade check over MQTT (1 s after the device link connects, then every 24 h).
    case upgradeCheck
    /// The upgrade check's answer is overdue (8 s).
    case rpcTimeout
}
