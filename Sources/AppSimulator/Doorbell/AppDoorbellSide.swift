import CallRuntime
import IPCWire

/// What `AppUser` keeps for PROTOCOL.md 8 besides its doorbell engine: the DPs each device
/// reported (8.3), the waits for a report (DP waits, wakes) and for 312 replies (8.6).
struct AppDoorbellSide: Sendable {
    /// The timer scheduler the doorbell engine's host runs on (kept for `configureDoorbells`).
    var scheduler: any TimerScheduling = TimerScheduler.shared
    /// Per device, the last value reported for each DP.
    var dps: [String: [DPId: DPValue]] = [:]
    var dpWaits: [UInt64: DPWait] = [:]
    var replyWaits: [UInt64: StreamControlWait] = [:]
    /// Retained meta topics the app reads (topic -> devId), and the `awake` each last said
    /// (PROTOCOL.md 8.4: a low-power device's meta carries it).
    var metaTopics: [String: String] = [:]
    var metaAwake: [String: Bool] = [:]
    private var nextToken: UInt64 = 0

    mutating func token() -> UInt64 {
        nextToken &+= 1
        return nextToken
    }

    /// Someone waits for a report of DP `id` from `devId` (with `value`, when given). Registered
    /// before the message that causes the report is sent (a wake); the waiter attaches its
    /// `continuation` later, or finds the `result` already there.
    struct DPWait: Sendable {
        let devId: String
        let id: DPId
        let value: DPValue?
        var continuation: CheckedContinuation<DPValue?, Never>?
        var result: DPValue?

        func matches(devId: String, id: DPId, value: DPValue) -> Bool {
            devId == self.devId && id == self.id && (self.value == nil || self.value == value)
        }
    }

    /// Someone waits for the device's reply to a 312 command (PROTOCOL.md 8.6: same header,
    /// `from`/`to` swapped, `resCode`).
    struct StreamControlWait: Sendable {
        let devId: String
        let type: StreamControlType
        let sessionId: String
        var continuation: CheckedContinuation<Int64?, Never>?
        var result: Int64?
    }
}
