import AppSimulator
import CallEngine
import DeviceProfile
import Emulator
import IPCWire
import Testing

extension EndToEnd {
    /// PROTOCOL.md 3.3: heartbeats, the connect timeout and shutdown, with short timers.
    @Suite("During a call (3.3)")
    struct DuringCall {
        /// The profile's timers: heartbeat every 0.2 s, 0.8 s without one ends the call (four
        /// intervals: a loaded machine may delay a timer by a few hundred ms).
        static func shortHeartbeats(_ p: inout DeviceProfile) {
            p.behaviour.answerPolicy = .answer(afterSeconds: 0)
            p.timers.heartbeatInterval = 0.2
            p.timers.heartbeatTimeout = 0.8
            p.timers.connectTimeout = 10
        }

        static func appConfig(_ user: String) -> AppEngineConfig {
            AppEngineConfig(userId: user, heartbeatIntervalMs: 200, heartbeatTimeoutMs: 800)
        }

        @Test("the app's heartbeats keep an answered call going; each gets exactly one reply")
        func heartbeatsKeepCallGoing() async throws {
            try await withHarness(edit: Self.shortHeartbeats) { h in
                let (app, events) = try await h.app("user-alice", config: Self.appConfig("user-alice"))
                let sessionId = try await app.startCall(devId: h.devId, timeoutSeconds: 10)
                #expect(await events.first { $0.receivedEvent(.answer) } != nil)
                // Longer than two heartbeat timeouts.
                try await Task.sleep(for: .milliseconds(1700))
                #expect(await h.device.status.phase == .answered, "the call did not survive its heartbeats")
                #expect(await app.phase == .answered)
                #expect(await h.deviceEvents.first(within: .zero) { $0.endedRecord } == nil)

                try await app.hangUp()
                #expect(await h.deviceEvents.first { $0.endedRecord }?.outcome == .hungUp)
                try await Task.sleep(for: .milliseconds(200))
                let fromApp = h.wire.inCalls().filter { $0.event == .heartbeat }
                let fromDevice = h.wire.sent(.heartbeat)
                #expect(fromApp.count >= 5, "only \(fromApp.count) heartbeats in 1.7 s at 0.2 s")
                #expect(fromDevice.count == fromApp.count, "device sent \(fromDevice.count) for \(fromApp.count)")
                #expect(fromDevice.allSatisfy { $0.sessionId == sessionId && $0.targetId == "user-alice" && $0.curId == h.devId })
                #expect(h.wire.sent(.stop).isEmpty)
            }
        }

        @Test("the app vanishes: the device sends stop heartbeat_timeout")
        func appVanishes() async throws {
            try await withHarness(edit: Self.shortHeartbeats) { h in
                let (app, events) = try await h.app("user-alice", config: Self.appConfig("user-alice"))
                let sessionId = try await app.startCall(devId: h.devId, timeoutSeconds: 10)
                #expect(await events.first { $0.receivedEvent(.answer) } != nil)
                _ = await h.wire.waitForSent(.heartbeat, count: 2)
                await app.vanish()

                let stop = try #require(await h.wire.waitForSent(.stop, within: .seconds(3)).first)
                #expect(stop.reason == "heartbeat_timeout" && stop.targetId == "user-alice" && stop.sessionId == sessionId)
                // The device's timeout runs from the last heartbeat it received, so the wait is
                // measured from there (as the tap saw both): on a loaded machine the app's last
                // heartbeat can come well before vanish() returns.
                let stopAt = try #require(h.wire.timedCalls(on: h.wire.outTopic).first { $0.call.event == .stop }?.at)
                let lastHeartbeat = try #require(h.wire.timedCalls(on: h.wire.inTopic).last { $0.call.event == .heartbeat && $0.at < stopAt }?.at)
                let waited = stopAt - lastHeartbeat
                #expect(waited >= .milliseconds(550) && waited < .milliseconds(2500), "stop \(waited) after the last heartbeat")
                let record = try #require(await h.deviceEvents.first { $0.endedRecord })
                #expect(record.outcome == .stopped && record.reason == .heartbeatTimeout && record.endedBy == .local)
                #expect(await h.device.status.phase == .idle)
            }
        }

        @Test("a doorbell call answered by an app: the app drives the heartbeats; when it vanishes, stop heartbeat_timeout")
        func outgoingCallHeartbeats() async throws {
            try await withHarness(edit: Self.shortHeartbeats) { h in
                var config = Self.appConfig("user-alice")
                config.incomingPolicy = .answerAfter(ms: 0)
                let (app, events) = try await h.app("user-alice", config: config, reach: .listening)
                let sessionId = try await h.device.press(targets: ["user-alice"], callType: .oneToOne)
                #expect(await events.first { $0.sentEvent(.answer) }?.sessionId == sessionId)
                #expect(await h.waitForPhase(.answered))
                try await Task.sleep(for: .milliseconds(1000))
                #expect(await h.device.status.phase == .answered, "the call did not survive its heartbeats")
                let fromApp = h.wire.inCalls().filter { $0.event == .heartbeat }.count
                #expect(fromApp >= 3)
                #expect(abs(h.wire.sent(.heartbeat).count - fromApp) <= 1)

                await app.vanish()
                let stop = try #require(await h.wire.waitForSent(.stop, within: .seconds(3)).first)
                #expect(stop.reason == "heartbeat_timeout" && stop.targetId == "user-alice")
                #expect(await h.deviceEvents.first { $0.endedRecord }?.reason == .heartbeatTimeout)
            }
        }

        @Test("no P2P link within connectTimeout: stop connect_failed (-2531)")
        func connectTimeout() async throws {
            try await withHarness(edit: {
                $0.behaviour.answerPolicy = .answer(afterSeconds: 0)
                $0.timers.connectTimeout = 0.5
            }) { h in
                let (app, events) = try await h.app("user-alice")
                let started = ContinuousClock.now
                _ = try await app.startCall(devId: h.devId, timeoutSeconds: 10)
                #expect(await events.first { $0.receivedEvent(.answer) } != nil)
                let stop = try #require(await events.first { $0.receivedEvent(.stop) })
                #expect(stop.reason == "connect_failed")
                #expect(ContinuousClock.now - started >= .milliseconds(450))
                #expect(await events.first { $0.endedRecord }?.sdkError == .connectFailed)
                let record = try #require(await h.deviceEvents.first { $0.endedRecord })
                #expect(record.outcome == .stopped && record.reason == .connectFailed)
            }
        }

        @Test("shutdown: an answered call gets hang_up with reason shutdown")
        func shutdownAnswered() async throws {
            try await withHarness(edit: { $0.behaviour.answerPolicy = .answer(afterSeconds: 0) }) { h in
                let (app, events) = try await h.app("user-alice")
                _ = try await app.startCall(devId: h.devId, timeoutSeconds: 10)
                #expect(await events.first { $0.receivedEvent(.answer) } != nil)
                await h.device.stop()
                let hangUp = try #require(await events.first { $0.receivedEvent(.hangUp) })
                #expect(hangUp.reason == "shutdown")
                #expect(await events.first { $0.endedRecord }?.sdkError == .peerHungUp)
            }
        }

        @Test("shutdown: a ringing incoming call gets reject, a ringing outgoing call cancel, with reason shutdown")
        func shutdownRinging() async throws {
            try await withHarness(edit: { $0.behaviour.answerPolicy = .manual }) { h in
                let (app, events) = try await h.app("user-alice")
                _ = try await app.startCall(devId: h.devId, timeoutSeconds: 10)
                #expect(await h.waitForPhase(.ringingIncoming))
                await h.device.stop()
                let reject = try #require(await events.first { $0.receivedEvent(.reject) })
                #expect(reject.reason == "shutdown")
            }
            try await withHarness { h in
                let (_, alice) = try await h.listener("user-alice")
                let (_, bob) = try await h.listener("user-bob")
                let sessionId = try await h.device.press(callType: .oneToMore)
                for e in [alice, bob] { #expect(await e.first { $0.incomingSession } == sessionId) }
                await h.device.stop()
                for e in [alice, bob] {
                    #expect(await e.first { $0.receivedEvent(.cancel) }?.reason == "shutdown")
                }
            }
        }
    }
}
