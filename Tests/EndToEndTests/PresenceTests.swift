import AppSimulator
import CallEngine
import CallRuntime
import DeviceProfile
@testable import Emulator
import Foundation
import IPCWire
import MQTTTransport
import Testing
import TestSupport

extension EndToEnd {
    /// PROTOCOL.md 1 and 5: the capability probe, the retained meta and online status, and a
    /// broker that dies and comes back.
    @Suite("Presence, probe and broker restarts (1, 5)")
    struct Presence {
        @Test("fetchDeviceCallAbility: the device answers the probe itself")
        func probe() async throws {
            try await withHarness { h in
                let (app, _) = try await h.app("user-alice")
                let answer = try await app.fetchDeviceCallAbility(devId: h.devId)
                guard case .answer(let target, let reqId) = answer.kind else {
                    Issue.record("not an ability answer: \(answer.kind)")
                    return
                }
                #expect(target == "user-alice" && reqId.hasPrefix("user-alice"))
                #expect(answer.devId == h.devId && answer.support && answer.rtcCapability.rawValue == 7)
                #expect(answer.bizType == "screen_ipc" && answer.category == "sp_dpsxj")
                #expect(answer.channelTypes == [.audio, .video, .audioVideo])
                #expect(answer.callTypes == [.oneToOne, .oneToMore, .oneToMoreSpecial])
                #expect(answer.liveView)
                #expect(answer.videoCodecs == ["H264"] && answer.audioCodecs == ["PCMA", "OPUS"])
                #expect(answer.streams.map { [$0.width, $0.height, $0.fps] } == [[1280, 720, 30], [640, 360, 15]])
                // The probe is no call: nothing changed.
                #expect(await h.device.status.phase == .idle)
                #expect(h.wire.outCalls().isEmpty)
            }
        }

        @Test("a device without a screen says support false (rtcCapability 3)")
        func probeWithoutTwoWay() async throws {
            try await withHarness(edit: { $0.capabilities.twoWay = false; $0.capabilities.channelTypes = [.audio] }) { h in
                let (app, _) = try await h.app("user-alice")
                let answer = try await app.fetchDeviceCallAbility(devId: h.devId)
                #expect(!answer.support && answer.rtcCapability.rawValue == 3)
                #expect(answer.channelTypes == [.audio])
            }
        }

        @Test("a fresh subscriber sees the retained meta and online status, plain in every mode",
              arguments: [SecurityMode.plain, .pv23])
        func retainedPresence(_ mode: SecurityMode) async throws {
            try await withHarness(edit: { $0.security = mode }) { h in
                let topics = h.profile.resolvedTopics
                let (meta, online) = try await Self.retained(h)
                let answer = try AbilityAnswer.decode(envelopeData: try Envelope.decode(meta.payload).data)
                #expect(answer.kind == .meta && answer.devId == h.devId && answer.support)
                #expect(meta.retain && meta.topic == topics.meta)

                #expect(online.retain && online.topic == "smart/device/meta/\(h.devId)/online")
                let status = try JSONValue.parse(online.payload)
                guard case .object(let o) = status, case .bool(true)? = o["online"], case .int(let t)? = o["t"] else {
                    Issue.record("online status is \(online.payloadText)")
                    return
                }
                #expect(abs(t - WallClock.nowSeconds()) <= 5)

                // A clean shutdown leaves {"online":false,"t":...}.
                await h.device.stop()
                let (_, offline) = try await Self.retained(h)
                #expect(offline.payloadText.contains(#""online":false"#) && offline.payloadText.contains(#""t":"#))
            }
        }

        @Test("a device that drops off leaves its will, {\"online\":false}")
        func lastWill() async throws {
            try await withHarness { h in
                h.device.client.disconnectAbruptly(reconnect: false)
                let gone = await eventually(timeout: .seconds(5)) {
                    (try? await Self.retained(h).online.payloadText) == #"{"online":false}"#
                }
                #expect(gone, "no will on the online topic")
            }
        }

        @Test("the broker is killed and restarted: the device reconnects and takes a call")
        func brokerRestart() async throws {
            try await withHarness(edit: { $0.behaviour.answerPolicy = .answer(afterSeconds: 0) }) { h in
                let (app, events) = try await h.app("user-alice")
                let mark = await h.deviceEvents.count
                let appMark = await events.count
                h.broker.kill()
                #expect(await h.deviceEvents.first(after: mark) { $0.isConnected == false ? true : nil } == true)
                #expect(await h.device.status.connected == false)
                try h.broker.restart()
                #expect(await h.deviceEvents.first(after: mark) { $0.isConnected == true ? true : nil } == true,
                        "the device did not reconnect")
                #expect(await events.first(after: appMark) { e -> Bool? in
                    if case .connection(true, _) = e { true } else { nil }
                } == true, "the app did not reconnect")
                #expect(await h.device.status.connected)

                // The broker lost its retained messages with its process: seeing them again means
                // the device published its presence on reconnecting.
                let (_, online) = try await Self.retained(h)
                #expect(online.payloadText.contains(#""online":true"#))

                // Its subscription works again: a call goes through.
                let sessionId = try await app.startCall(devId: h.devId, timeoutSeconds: 10)
                #expect(await events.first { $0.receivedEvent(.answer) }?.sessionId == sessionId)
                #expect(await h.device.status.phase == .answered)
                try await app.hangUp()
                #expect(await h.deviceEvents.first { $0.endedRecord }?.outcome == .hungUp)
            }
        }

        /// The retained meta and online messages, as a new subscriber gets them.
        static func retained(_ h: CallHarness) async throws -> (meta: MQTTMessage, online: MQTTMessage) {
            let topics = h.profile.resolvedTopics
            let collector = try await MessageCollector.start(broker: h.broker, filters: [topics.meta, topics.online])
            let got = await collector.waitForMessages(count: 2, timeout: .seconds(3))
            await collector.stop()
            let meta = try #require(got.first { $0.topic == topics.meta })
            let online = try #require(got.first { $0.topic == topics.online })
            return (meta, online)
        }
    }
}
