import Foundation

extension DeviceProfile {
    /// A doorbell profile built in code for fast tests: plain payloads, the default topics, a
    /// small stamped test pattern (320x240 at 15 fps main, 160x120 sub) and ``Timers/fastTests``.
    ///
    /// Vary it like any value:
    /// ```swift
    /// var profile = DeviceProfile.testDoorbell(household: ["user-alice"])
    /// profile.behaviour.answerPolicy = .rejectAfter(seconds: 0.5)
    /// ```
    /// - Parameters:
    ///   - devId: the device id; default: `test-doorbell-` and 8 random hex digits, so parallel
    ///     tests on one broker never collide. `{index}` makes it a fleet template.
    ///   - household: the app users a press calls.
    ///   - answerPolicy: what the device does with an incoming call (default: answer at once).
    public static func testDoorbell(devId: String? = nil, household: [String] = ["user-alice"],
                                    answerPolicy: AnswerPolicy = .answer(afterSeconds: 0)) -> DeviceProfile {
        let id = devId ?? "test-doorbell-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let main = StreamFormat(width: 320, height: 240, fps: 15)
        return DeviceProfile(
            identity: Identity(devId: id, localKey: "0123456789abcdef", p2pPassword: "test-p2p-password",
                               name: "Test doorbell", category: "sp_dpsxj"),
            capabilities: Capabilities(video: Video(main: main, sub: StreamFormat(width: 160, height: 120, fps: 15))),
            behaviour: Behaviour(answerPolicy: answerPolicy, household: household, callTimeout: 10),
            timers: .fastTests)
    }
}

extension DeviceProfile.Timers {
    /// Heartbeats every 1 s, a 3 s heartbeat timeout and a 5 s connect timeout: a missing
    /// heartbeat or a link that never comes up shows within seconds, not half a minute.
    public static let fastTests = DeviceProfile.Timers(heartbeatInterval: 1, heartbeatTimeout: 3, connectTimeout: 5)
}
