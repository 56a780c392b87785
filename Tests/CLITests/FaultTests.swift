import AppSimulator
import CallEngine
import Foundation
import IPCWire
import MQTTTransport
import Testing
import TestSupport

/// Issue 10 part 3: faults in the middle of a call, each through real processes (mosquitto,
/// `ipcemu run`, and the app simulator, here or as `ipcemu app call`). The profile's heartbeat
/// timeout is 4 s (FaultRig), so "short" and "long" outages are seconds, not minutes.
@Suite("Faults mid-call (issue 10)", .serialized, .timeLimit(.minutes(8)), .heavy)
struct FaultTests {
    @Test("broker killed for a moment during an answered call with video: the call survives, heartbeats resume, the video never stops")
    func brokerShortOutage() async throws {
        let rig = try await FaultRig()
        let run = try await rig.device()
        let alice = try await rig.app()
        let sid = try await alice.answeredCall()
        try await alice.videoFlowing(sid)

        rig.broker.kill()
        let killed = alice.count
        try await Task.sleep(for: .milliseconds(500))
        try rig.broker.restart()
        // Both sides are back: the device connected a second time, and a heartbeat reply came
        // through the new broker (the moment of any timeout on either side has passed by then).
        #expect(await eventually(timeout: .seconds(8)) { FaultRig.connections(run) >= 2 }, "\(run.stderr.suffix(1500))")
        let reply = await alice.first(after: killed, within: .seconds(8)) { e -> Bool? in
            if case .received(let m, _) = e, m.event == .heartbeat, m.sessionId == sid { true } else { nil }
        }
        #expect(reply == true)
        try await alice.framesGrow(sid, by: 15)
        #expect(alice.ends(sid).isEmpty, "the call ended: \(alice.ends(sid))")
        #expect(await alice.app.phase == .answered)

        try await alice.app.hangUp()
        #expect(await alice.first(within: .seconds(5)) { e -> Bool? in if case .callEnded = e { true } else { nil } } == true)
        #expect(await eventually { ((try? rig.journalEnds(sid)) ?? []).count == 1 })
        #expect(try rig.journalEnds(sid).first?["outcome"] == .string("hungUp"))
        await alice.stop()
        run.signal(SIGTERM)
        #expect(await run.waitForExit(timeout: .seconds(5)) == 0)
    }

    @Test("broker down longer than the heartbeat timeout: the call ends once on each side, nothing stale after the reconnect, the next call works")
    func brokerLongOutage() async throws {
        let rig = try await FaultRig()
        let run = try await rig.device()
        let alice = try await rig.app()
        let sid = try await alice.answeredCall()
        try await alice.videoFlowing(sid)

        rig.broker.kill()
        // The app gives up first or at about the same time as the device: -2532 (PROTOCOL.md 3.3).
        let ended = await alice.first(within: .seconds(10)) { e -> CallRecord? in
            if case .callEnded(let r) = e, r.sessionId == sid { r } else { nil }
        }
        #expect(ended?.sdkError == .disconnect, "\(String(describing: ended))")
        // The device's heartbeat timeout has passed too (it started no later than the app's): wait
        // for its journal to record the end, not for a fixed time (a starved device process can
        // fire its timeout late, and would then rightly answer the app's queued heartbeats).
        #expect(await eventually(timeout: .seconds(30)) { ((try? rig.journalEnds(sid)) ?? []).count == 1 },
                "the device never ended \(sid) while the broker was down")
        let restartedAt = alice.count
        try rig.broker.restart()
        #expect(await eventually(timeout: .seconds(15)) { FaultRig.connections(run) >= 2 }, "\(run.stderr.suffix(1500))")
        #expect(await alice.first(after: restartedAt, within: .seconds(15)) { e -> Bool? in
            if case .connection(true, _) = e { true } else { nil }
        } == true)

        // A new call after the reconnect rings, is answered, and lives past a heartbeat reply:
        // whatever the outage left queued (the app's heartbeats, the device's stop) touches nothing.
        let next = try await alice.answeredCall()
        #expect(next != sid)
        let mark = alice.count
        #expect(await alice.first(after: mark, within: .seconds(5)) { e -> Bool? in
            if case .received(let m, _) = e, m.event == .heartbeat, m.sessionId == next { true } else { nil }
        } == true)
        try await alice.app.hangUp()
        #expect(await alice.first(after: mark) { e -> Bool? in if case .callEnded(let r) = e, r.sessionId == next { true } else { nil } } == true)

        // Exactly once on each side; no heartbeat of the dead session after the reconnect.
        #expect(alice.ends(sid).count == 1, "\(alice.ends(sid))")
        #expect(alice.ends(next).count == 1)
        let stale = alice.received(after: restartedAt).filter { $0.sessionId == sid && $0.event == .heartbeat }
        #expect(stale.isEmpty, "stale replies: \(stale)")
        #expect(await eventually { ((try? rig.journalEnds(next)) ?? []).count == 1 })
        let deviceEnds = try rig.journalEnds(sid)
        #expect(deviceEnds.count == 1, "\(deviceEnds)")
        #expect(deviceEnds.first?["reason"] == .string("heartbeat_timeout"), "\(deviceEnds)")
        await alice.stop()
        run.signal(SIGTERM)
        #expect(await run.waitForExit(timeout: .seconds(5)) == 0)
    }

    @Test("the device's MQTT connection reset during a call: it reconnects, the call and its video go on",
          .enabled(if: FaultRig.canDropConnections, "ss -K needs root"))
    func deviceLinkDropped() async throws {
        let rig = try await FaultRig()
        let run = try await rig.device()
        let alice = try await rig.app()
        let sid = try await alice.answeredCall()
        try await alice.videoFlowing(sid)

        let dropped = FaultRig.dropConnections(of: run.process.processIdentifier, toPort: rig.broker.port)
        #expect(dropped == 1, "ss -K aborted \(dropped) connections")
        let mark = alice.count
        #expect(await eventually(timeout: .seconds(8)) { FaultRig.connections(run) >= 2 }, "\(run.stderr.suffix(1500))")
        // A heartbeat reply after the reconnect: the device hears the app again on the same call.
        let connectedAgain = await alice.first(after: mark, within: .seconds(8)) { e -> Int? in
            if case .received(let m, _) = e, m.event == .heartbeat, m.sessionId == sid { 1 } else { nil }
        }
        #expect(connectedAgain == 1)
        try await alice.framesGrow(sid, by: 15)
        #expect(alice.ends(sid).isEmpty)
        try await alice.app.hangUp()
        #expect(await eventually { ((try? rig.journalEnds(sid)) ?? []).count == 1 })
        #expect(try rig.journalEnds(sid).first?["outcome"] == .string("hungUp"))
        await alice.stop()
        run.signal(SIGTERM)
        #expect(await run.waitForExit(timeout: .seconds(5)) == 0)
    }

    @Test("the app process killed mid-call (video flowing): the device ends the call exactly once and takes the next one")
    func appKilled() async throws {
        let rig = try await FaultRig()
        let run = try await rig.device()
        let out = try await MessageCollector.start(broker: rig.broker, filters: ["smart/device/out/\(FaultRig.devId)"])
        let phone = try IPCEmuProcess([
            "app", "call", FaultRig.devId, "--broker", rig.broker.url, "--profile", rig.profilePath,
            "--user", "user-bob", "--video", "--heartbeat-interval", "1",
        ])
        #expect(await phone.waitFor("video: ", timeout: .seconds(20)), "\(phone.stdout)\n\(phone.stderr.suffix(1000))")
        let answerLine = phone.stdout.split(separator: "\n").first { $0.contains("<- answer") }
        let sid = try #require(answerLine?.split(separator: " ").first { $0.hasPrefix("session=") }?.dropFirst("session=".count))
        phone.signal(SIGKILL)
        _ = await phone.waitForExit(timeout: .seconds(5))

        // The device notices (no heartbeat for 4 s, or the P2P link gone for 5 s) and stops the call.
        func stops() -> [CallMessage] {
            out.messages.compactMap { m -> CallMessage? in
                guard case .call(let c)? = try? InboundMessage.decode(payload: m.payload).message,
                      c.sessionId == String(sid), c.event == .stop else { return nil }
                return c
            }
        }
        #expect(await eventually(timeout: .seconds(10)) { !stops().isEmpty })
        #expect(["heartbeat_timeout", "disconnected"].contains(stops().first?.reason ?? ""), "\(stops())")
        // The next call is answered; by then any second stop would have gone out before it.
        let alice = try await rig.app()
        let next = try await alice.answeredCall()
        try await alice.app.hangUp()
        #expect(await eventually { ((try? rig.journalEnds(next)) ?? []).count == 1 })
        #expect(stops().count == 1, "\(stops())")
        #expect(try rig.journalEnds(String(sid)).count == 1)
        await alice.stop()
        await out.stop()
        run.signal(SIGTERM)
        #expect(await run.waitForExit(timeout: .seconds(5)) == 0)
    }
}
