import AppSimulator
import CallEngine
import ControlAPI
import DeviceProfile
import Foundation
import IPCWire
import MQTTTransport
import Testing
import TestSupport

extension ControlAPI {
    @Suite("Faults, as the app simulator sees them") struct Faults {
        @Test("heartbeat replies stop: the app ends the answered call with -2532")
        func heartbeatRepliesStop() async throws {
            try await withControl(edit: { $0.behaviour.answerPolicy = .answer(afterSeconds: 0) }) { f in
                let put = try await f.request("PUT", f.base + "/faults", .object(["heartbeatRepliesSuppressed": .bool(true)]))
                #expect(put.status == 200)
                #expect(put.json?["heartbeatRepliesSuppressed"]?.bool == true)
                let get = try await f.request("GET", f.base + "/faults")
                #expect(get.json?["heartbeatRepliesSuppressed"]?.bool == true)
                let config = AppEngineConfig(userId: "user-alice", heartbeatIntervalMs: 200, heartbeatTimeoutMs: 900)
                let (app, events) = try await f.app("user-alice", config: config)
                try await app.startCall(devId: f.devId, timeoutSeconds: 10)
                let ended = await events.first(within: .seconds(6)) { $0.ended }
                #expect(ended?.sdkError == .disconnect)
                #expect(ended?.answeredAt != nil)
            }
        }

        @Test("heartbeats answered (control): the same call stays up past the app's timeout")
        func heartbeatsAnswered() async throws {
            try await withControl(edit: { $0.behaviour.answerPolicy = .answer(afterSeconds: 0) }) { f in
                let config = AppEngineConfig(userId: "user-alice", heartbeatIntervalMs: 200, heartbeatTimeoutMs: 900)
                let (app, events) = try await f.app("user-alice", config: config)
                try await app.startCall(devId: f.devId, timeoutSeconds: 10)
                #expect(await phaseOf(app, becomes: .answered))
                try await Task.sleep(for: .milliseconds(1800))
                #expect(events.all.compactMap { $0.ended }.isEmpty)
                #expect(await app.phase == .answered)
            }
        }

        @Test("reply delay: the ring arrives at least N ms after the call")
        func replyDelay() async throws {
            try await withControl(edit: { $0.behaviour.answerPolicy = .manual }) { f in
                let put = try await f.request("PUT", f.base + "/faults", .object(["replyDelayMs": .int(600)]))
                #expect(put.json?["replyDelayMs"]?.int == 600)
                let (app, events) = try await f.app("user-alice")
                let start = ContinuousClock.now
                try await app.startCall(devId: f.devId, timeoutSeconds: 10)
                let rang = await events.first(within: .seconds(5)) { e -> Bool? in
                    if case .deviceRinging = e { true } else { nil }
                }
                let elapsed = ContinuousClock.now - start
                #expect(rang == true)
                #expect(elapsed >= .milliseconds(600), "ring after \(elapsed)")
            }
        }

        @Test("act busy: the app's call ends busy (-2511); clearing it lets calls ring again")
        func actBusy() async throws {
            try await withControl(edit: { $0.behaviour.answerPolicy = .manual }) { f in
                let put = try await f.request("PUT", f.base + "/faults", .object(["actingBusy": .bool(true)]))
                #expect(put.json?["actingBusy"]?.bool == true)
                #expect(try await f.request("GET", f.base).json?["actingBusy"]?.bool == true)
                let (app, events) = try await f.app("user-alice")
                try await app.startCall(devId: f.devId, timeoutSeconds: 10)
                let ended = await events.first { $0.ended }
                #expect(ended?.outcome == .busy)
                #expect(ended?.sdkError == .peerBusy)
                _ = try await f.request("PUT", f.base + "/faults", .object(["actingBusy": .bool(false)]))
                try await app.startCall(devId: f.devId, timeoutSeconds: 10)
                #expect(await f.waitForPhase(.ringingIncoming))
            }
        }

        @Test("drop the connection: the broker publishes the will (offline), then the device comes back online")
        func dropConnection() async throws {
            try await withControl { f in
                let online = f.profile.resolvedTopics.online
                let watcher = try await MessageCollector.start(broker: f.broker, filters: [online])
                #expect(await eventually { watcher.messages.contains { String(decoding: $0.payload, as: UTF8.self).contains(#""online":true"#) } })
                watcher.reset()
                let r = try await f.request("POST", f.base + "/faults/drop-connection", .object(["seconds": .double(1)]))
                #expect(r.status == 202)
                let payloads = { watcher.messages.map { String(decoding: $0.payload, as: UTF8.self) } }
                #expect(await eventually(timeout: .seconds(8)) { payloads().contains(#"{"online":false}"#) })
                #expect(await eventually(timeout: .seconds(8)) {
                    let p = payloads()
                    guard let off = p.firstIndex(of: #"{"online":false}"#) else { return false }
                    return p[(off + 1)...].contains { $0.contains(#""online":true"#) }
                })
                #expect(await eventually(timeout: .seconds(5)) { f.device.mqttCounters.reconnects == 1 })
                let metrics = try await f.request("GET", "/metrics").text
                #expect(metrics.contains(#"ipcemu_mqtt_reconnects_total{device="\#(f.devId)"} 1"#))
                await watcher.stop()
            }
        }

        @Test("drop the P2P link: the video stops and, 5 s later, the device stops the call with disconnected (-2532)",
              .timeLimit(.minutes(8)))
        func dropP2P() async throws {
            try await withControl(edit: {
                $0.behaviour.answerPolicy = .answer(afterSeconds: 0)
                $0.capabilities.video?.main = DeviceProfile.StreamFormat(width: 320, height: 240, fps: 15)
            }) { f in
                let (app, events) = try await f.app("user-alice")
                try await app.startCall(devId: f.devId, timeoutSeconds: 10)
                #expect(await phaseOf(app, becomes: .answered))
                let sid = try await app.openVideo()
                let deadline = ContinuousClock.now + .seconds(15)
                while ContinuousClock.now < deadline, (await app.videoStats(sessionId: sid)?.framesDecoded ?? 0) < 10 {
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect((await app.videoStats(sessionId: sid)?.framesDecoded ?? 0) >= 10)
                let r = try await f.request("POST", f.base + "/faults/drop-p2p")
                #expect(r.status == 202)
                #expect(r.json?["dropped"]?.int == 1)
                let ended = await events.first(within: .seconds(9)) { $0.ended }
                #expect(ended?.reason == .disconnected || ended?.remoteReason == "disconnected", "\(String(describing: ended))")
                #expect(ended?.sdkError == .disconnect)
                #expect(try await f.request("POST", "/api/devices/x/faults/drop-p2p").status == 404)
            }
        }
    }
}
