import AppSimulator
import CallEngine
import CallRuntime
import DeviceProfile
import Emulator
import IPCWire
import MQTTTransport
import Testing
import TestSupport

extension EndToEnd {
    /// PROTOCOL.md 2.1: protected payloads end to end, and what a receiver drops.
    @Suite("Payload protection (2.1)")
    struct PayloadProtection {
        static let modes: [SecurityMode] = [.pv23, .pv22]

        static func sealed(_ mode: SecurityMode, policy: DeviceProfile.AnswerPolicy) -> (inout DeviceProfile) -> Void {
            { p in
                p.security = mode
                p.behaviour.answerPolicy = policy
            }
        }

        @Test("a whole call, and the probe, in a protected mode", arguments: modes)
        func sealedCall(_ mode: SecurityMode) async throws {
            try await withHarness(edit: Self.sealed(mode, policy: .answer(afterSeconds: 0))) { h in
                let (app, events) = try await h.app("user-alice")
                #expect(try await app.fetchDeviceCallAbility(devId: h.devId).devId == h.devId)
                let sessionId = try await app.startCall(devId: h.devId, timeoutSeconds: 10)
                #expect(await events.first { $0.receivedEvent(.ring) }?.sessionId == sessionId)
                #expect(await events.first { $0.receivedEvent(.answer) }?.sessionId == sessionId)
                try await app.hangUp()
                #expect(await h.deviceEvents.first { $0.endedRecord }?.outcome == .hungUp)
                await h.wire.waitForSent(.answer)

                // On the wire: nothing readable, every payload carries the mode's header.
                let prefix = try #require(mode.versionPrefix)
                let payloads = h.wire.payloads(on: h.wire.outTopic) + h.wire.payloads(on: h.wire.inTopic)
                #expect(payloads.count >= 5)
                for p in payloads {
                    #expect(Array(p.prefix(3)) == prefix)
                    #expect(!String(decoding: p, as: UTF8.self).contains("sessionId"), "plain JSON on the wire")
                }
                #expect(h.wire.outCalls().map(\.event) == [.ring, .answer])

                // QoS 1, not retained (PROTOCOL.md 1).
                let messages = h.wire.collector.messages(on: h.wire.outTopic) + h.wire.collector.messages(on: h.wire.inTopic)
                #expect(messages.allSatisfy { $0.qos == 1 && !$0.retain })
                // Headers: the device is from 1, the app from 2^31 + CRC bits; seqs start from the
                // clock and go up by one per message (PROTOCOL.md 2.1).
                let clockSeq = PayloadSealer.initialSequence(unixSeconds: WallClock.nowSeconds())
                for (topic, from) in [(h.wire.outTopic, SealHeader.deviceFrom), (h.wire.inTopic, app.sealFrom)] {
                    var opener = try PayloadOpener(mode: mode, localKey: h.profile.identity.localKey)
                    let headers = try h.wire.payloads(on: topic).map { try #require(try opener.open($0).header) }
                    #expect(headers.allSatisfy { $0.from == from })
                    let seqs = headers.map(\.seq)
                    #expect(seqs == Array(seqs[0]..<(seqs[0] + UInt32(seqs.count))), "seqs \(seqs)")
                    #expect(seqs[0] <= clockSeq && clockSeq - seqs[0] < 100, "seq \(seqs[0]) vs clock \(clockSeq)")
                }
                #expect(app.sealFrom >= 0x8000_0000)
                #expect(await h.deviceEvents.first(within: .zero) { $0.isRefusal ? true : nil } == nil)
            }
        }

        @Test("an app with the wrong localKey, or sending plain JSON, is not heard", arguments: modes)
        func wrongKey(_ mode: SecurityMode) async throws {
            try await withHarness(edit: Self.sealed(mode, policy: .answer(afterSeconds: 0))) { h in
                let (app, _) = try await h.app("user-alice")
                var stranger = h.address
                stranger.localKey = "0123456789abcdef"
                let eve = try AppUser(userId: "user-eve", connection: h.broker.clientOptions(clientID: "eve"),
                                      log: CallHarness.quietLog)
                try await eve.start()
                try await eve.add(stranger)
                let mark = await h.deviceEvents.count
                _ = try await eve.startCall(devId: h.devId, timeoutSeconds: 10)
                #expect(await h.deviceEvents.first(after: mark) { $0.isRefusal ? true : nil } == true)

                let plain = h.call(from: "user-eve", session: "eve-plain-1").envelope(t: WallClock.nowSeconds())
                let (refused, replies) = try await h.repliesToDropped(plain.encoded())
                #expect(refused && replies.isEmpty)
                #expect(await h.device.status.phase == .idle)
                #expect(await h.device.status.callsEnded == 0)
                await eve.stop()
                _ = app
            }
        }

        @Test("a tampered payload is dropped: no reply, no state change", arguments: modes)
        func tampered(_ mode: SecurityMode) async throws {
            try await withHarness(edit: Self.sealed(mode, policy: .manual)) { h in
                let call = h.call(from: "user-mallory", session: "mallory-1")
                let good = try h.seal(call.envelope(t: WallClock.nowSeconds()).encoded())
                let before = await h.device.status

                var lastByte = good
                lastByte[lastByte.count - 1] ^= 0x01
                var headerByte = good
                headerByte[9] ^= 0x80            // a header byte: authenticated (2.3) / CRC-covered (2.2)
                let short = Array(good.prefix(10))
                for bad in [lastByte, headerByte, short] {
                    let (refused, replies) = try await h.repliesToDropped(bad)
                    #expect(refused, "not refused")
                    #expect(replies.isEmpty, "replied to a tampered payload: \(replies.map(\.event))")
                    #expect(await h.device.status == before)
                }

                // The same call untouched is accepted: the device rings. (Sealed again: the probes
                // that proved each drop had newer seqs, so `good` itself is a replay by now.)
                try await h.sendRaw(h.seal(call.envelope(t: WallClock.nowSeconds()).encoded()))
                #expect(await h.wire.waitForSent(.ring).first?.sessionId == "mallory-1")
                #expect(await h.waitForPhase(.ringingIncoming))
            }
        }

        @Test("a replayed payload is dropped: no second ring, no state change", arguments: modes)
        func replayed(_ mode: SecurityMode) async throws {
            try await withHarness(edit: Self.sealed(mode, policy: .manual)) { h in
                let first = try h.seal(h.call(from: "user-mallory", session: "mallory-1").envelope(t: WallClock.nowSeconds()).encoded())
                try await h.sendRaw(first)
                #expect(await h.wire.waitForSent(.ring).count == 1)
                #expect(await h.waitForPhase(.ringingIncoming))
                let ringing = await h.device.status

                // A verbatim replay: accepted, it would be a repeated call and get a second ring.
                let (refused, replies) = try await h.repliesToDropped(first)
                #expect(refused && replies.isEmpty, "replay answered: \(replies.map(\.event))")
                #expect(await h.device.status == ringing)

                // An older seq from the same sender after a newer one: dropped too.
                let older = try h.seal(h.call(from: "user-mallory", session: "mallory-1").envelope(t: WallClock.nowSeconds()).encoded())
                let newer = try h.seal(CallMessage(event: .heartbeat, curId: "user-mallory", targetId: h.devId,
                                                   sessionId: "mallory-1").envelope(t: WallClock.nowSeconds()).encoded())
                try await h.sendRaw(newer)
                #expect(await h.wire.waitForSent(.heartbeat).count == 1)
                let (refusedOld, repliesOld) = try await h.repliesToDropped(older)
                #expect(refusedOld && repliesOld.isEmpty)
                #expect(h.wire.sent(.ring).count == 1)
                #expect(await h.device.status == ringing)
            }
        }
    }
}
