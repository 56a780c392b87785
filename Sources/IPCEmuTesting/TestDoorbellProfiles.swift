import Foundation

extension DeviceProfile {
    /// A Tuya-style doorbell profile built in code for fast tests (PROTOCOL.md 8): a press sends
    /// protocol 43 and the app answers with `video_doorbell` messages; it has every DP of 8.3's
    /// table. Built on ``testDoorbell(devId:household:answerPolicy:)`` (plain payloads, default
    /// topics, a small stamped test pattern, ``Timers/fastTests``).
    ///
    /// ```swift
    /// let profile = DeviceProfile.testTuyaDoorbell(kind: .doorbell, sleepAfter: 2, wakeLatency: 0.3)
    /// ```
    /// - Parameters:
    ///   - kind: `.acDoorbell` (mains powered, always awake; the default) or `.doorbell` (battery:
    ///     sleeps after `sleepAfter` idle seconds, wakes after `wakeLatency`).
    ///   - ringTimeout: seconds a press rings before the device's `timeout` (8.2).
    ///   - sleepAfter: idle seconds before a battery doorbell sleeps (ignored for `.acDoorbell`).
    ///   - wakeLatency: seconds from a wake to DP 149 `true` (ignored for `.acDoorbell`).
    public static func testTuyaDoorbell(kind: Doorbell.Kind = .acDoorbell, devId: String? = nil,
                                        household: [String] = ["user-alice"], ringTimeout: Double = 10,
                                        sleepAfter: Double = 180, wakeLatency: Double = 0.3) -> DeviceProfile {
        var profile = testDoorbell(devId: devId ?? "test-\(kind.rawValue)-" + String(UInt32.random(in: 0...UInt32.max), radix: 16),
                                   household: household)
        profile.identity.category = kind == .doorbell ? "dghsxj" : "sp"
        profile.doorbell = Doorbell(kind: kind, ringTimeout: ringTimeout)
        profile.power = Power.defaults(for: kind)
        if kind == .doorbell {
            profile.power.sleepAfter = sleepAfter
            profile.power.wakeLatency = wakeLatency
        }
        profile.dataPoints = DataPoints.defaults(for: kind)
        return profile
    }
}
