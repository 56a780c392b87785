import AppSimulator
import CallEngine
import CameraTestSupport
import CallRuntime
import DeviceProfile
import Emulator
import Foundation
import IPCWire
import MQTTTransport
import Testing
import TestSupport

/// PROTOCOL.md 8 end to end, black-box: a doorbell-kind device on a real mosquitto, driven by
/// hand-made messages as the app would send them, read back from its out topic as the app would
/// read them.
extension EndToEnd {
    @Suite("Doorbells: presses, data points, sleep and wake (8)")
    struct DoorbellDevice {
        /// The AC doorbell with one household user and short timers.
        static func acDoorbell(_ p: inout DeviceProfile) {
            p.behaviour.household = ["user-alice", "user-bob"]
            p.doorbell.ringTimeout = 1.5
            p.timers.heartbeatTimeout = 30
        }

        /// The battery doorbell: sleeps after 0.6 s idle, wakes in 0.3 s.
        static func batteryDoorbell(_ p: inout DeviceProfile) {
            p.behaviour.household = ["user-alice", "user-bob"]
            p.power.lowPower = true
            p.power.sleepAfter = 0.6
            p.power.wakeLatency = 0.3
            p.doorbell.ringTimeout = 5
        }

        /// 8.3: "On connect ... the device reports all its DPs once": waits for it, so a test's
        /// mark comes after it.
        static func connectReport(_ h: CallHarness) async throws {
            let all = h.profile.dataPoints.ids.count
            _ = try #require(await h.wire.waitForReport { $0.dps.count == all }, "no report of every DP on connect")
        }

        static func videoDoorbell(_ h: CallHarness, _ event: DoorbellEvent, uid: String, callId: String) async throws {
            let m = VideoDoorbellMessage(devId: h.devId, uid: uid, event: event, eData: callId)
            try await h.sendRaw(h.seal(m.envelope(t: WallClock.nowSeconds()).encoded()))
        }

        @Test("8.1: a press publishes one 43 with the kind and a call id, then DP 136/154/185 in one report")
        func pressAnnounces() async throws {
            try await withHarness(profile: "ac-doorbell.yaml", edit: Self.acDoorbell) { h in
                try await Self.connectReport(h)
                let before = WallClock.nowSeconds()
                let mark = h.wire.reports().count
                let callId = try await h.device.press()
                let press = try #require(await h.wire.waitForDoorbellPress())
                #expect(press.devId == h.devId && press.etype == "ac_doorbell" && press.edata == callId)
                // 8.1: 8 lowercase hex digits then the unix seconds.
                #expect(callId.count >= 18 && callId.prefix(8).allSatisfy { $0.isHexDigit && !$0.isUppercase })
                let seconds = try #require(Int64(callId.dropFirst(8)))
                #expect(seconds >= before && seconds <= WallClock.nowSeconds())
                let report = try #require(await h.wire.waitForReport(afterCount: mark) { $0[136] != nil && $0[154] != nil })
                #expect(report.dps.count == 3, "the press's report carries exactly DP 136, 154 and 185")
                #expect(report[136] == .string(String(seconds)))
                #expect(report[185] != nil, "DP 185 came in another report")
                // DP 154's reference names the press snapshot on the control API's media route.
                guard case .string(let ref)? = report[154], let json = Data(base64Encoded: ref),
                      let text = String(data: json, encoding: .utf8) else {
                    Issue.record("DP 154 is not base64 text: \(String(describing: report[154]))")
                    return
                }
                #expect(text.contains("/api/devices/\(h.devId)/media/press-\(callId).jpg"))
                let jpeg = try #require(await h.device.mediaStore.read("press-\(callId).jpg"))
                #expect(jpeg.count > 1000 && jpeg.count <= 100_000 && jpeg.prefix(2) == [0xFF, 0xD8])
                #expect(h.wire.doorbellPresses().count == 1)
            }
        }

        @Test("8.1: a press while the call rings is counted and ignored (no second 43)")
        func pressWhileRinging() async throws {
            try await withHarness(profile: "ac-doorbell.yaml", edit: Self.acDoorbell) { h in
                let callId = try await h.device.press()
                #expect(await h.wire.waitForDoorbellPress() != nil)
                await #expect(throws: CallActionError.self) { try await h.device.press() }
                #expect(await h.device.doorbellCounters.pressesIgnored == 1)
                // The moment has passed once the accept that follows is answered.
                try await Self.videoDoorbell(h, .accept, uid: "user-alice", callId: callId)
                #expect(await h.wire.waitForDoorbell(.answered) != nil)
                #expect(h.wire.doorbellPresses().count == 1)
            }
        }

        @Test("8.2: accept -> answered to everyone; a second accept gets stop answered_by_other; heartbeats answered; stop hangs up")
        func acceptAnsweredByOtherHeartbeatStop() async throws {
            try await withHarness(profile: "ac-doorbell.yaml", edit: Self.acDoorbell) { h in
                let callId = try await h.device.press()
                _ = await h.wire.waitForDoorbellPress()
                try await Self.videoDoorbell(h, .accept, uid: "user-alice", callId: callId)
                let answered = try #require(await h.wire.waitForDoorbell(.answered))
                #expect(answered.uid == "user-alice" && answered.eData == callId)
                #expect(await h.device.status.phase == .answered)

                try await Self.videoDoorbell(h, .accept, uid: "user-bob", callId: callId)
                let stop = try #require(await h.wire.waitForDoorbell(.stop))
                #expect(stop.uid == "user-bob" && stop.reason == "answered_by_other")

                try await Self.videoDoorbell(h, .heartbeat, uid: "user-alice", callId: callId)
                let beat = try #require(await h.wire.waitForDoorbell(.heartbeat))
                #expect(beat.uid == "user-alice")

                // A stop after the accept from someone else changes nothing: proven by the
                // accepting user's heartbeat that is still answered after it.
                try await Self.videoDoorbell(h, .stop, uid: "user-bob", callId: callId)
                try await Self.videoDoorbell(h, .heartbeat, uid: "user-alice", callId: callId)
                #expect(await h.wire.waitForDoorbell(.heartbeat, count: 2).count == 2)
                #expect(await h.device.status.phase == .answered)

                try await Self.videoDoorbell(h, .stop, uid: "user-alice", callId: callId)
                let record = try #require(await h.deviceEvents.first { $0.endedRecord })
                #expect(record.sessionId == callId && record.answeredBy == "user-alice")
                #expect(await h.device.status.phase == .idle)
            }
        }

        @Test("8.2, 8.5: no accept within ringTimeout -> timeout, DP 212 ipc_doorbell; a press in the window records an MP4 and DP 212 ipc_leave_msg")
        func ringTimeoutThenMessage() async throws {
            try await withHarness(profile: "ac-doorbell.yaml", edit: {
                Self.acDoorbell(&$0)
                $0.doorbell.messages = true
                $0.doorbell.messageSeconds = 2
                $0.doorbell.messageWindow = 10
            }) { h in
                let callId = try await h.device.press()
                let timeout = try #require(await h.wire.waitForDoorbell(.timeout, within: .seconds(5)))
                #expect(timeout.eData == callId && timeout.uid == nil)
                let missed = try #require(await h.wire.waitForAlert("ipc_doorbell"))
                #expect(missed["type"] == .string("image"))

                let messageId = try await h.device.press()
                #expect(messageId == callId, "a press in the window records the missed call's message")
                let left = try #require(await h.wire.waitForAlert("ipc_leave_msg", within: .seconds(15)))
                #expect(left["type"] == .string("video"))
                #expect(left["duration"] == .int(2))
                #expect(h.wire.doorbellPresses().count == 1, "a press in the window sent a second 43")

                let mp4 = try #require(await h.device.mediaStore.read("message-\(callId).mp4"))
                #expect(mp4.count > 1000)
                #expect(Array(mp4[4..<8]) == Array("ftyp".utf8), "not an MP4")
                // It decodes, and every picture's stamp reads (PROTOCOL.md 6): about 2 s of the camera.
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("message-\(callId).mp4").path
                try Data(mp4).write(to: URL(fileURLWithPath: file))
                defer { try? FileManager.default.removeItem(atPath: file) }
                let video = try await StampDecoding.mp4Video(file)
                #expect(video.counters.count >= 20, "\(video.counters.count) pictures in a 2 s message")
                #expect(zip(video.counters, video.counters.dropFirst()).allSatisfy { ($1 &- $0) % 4096 >= 1 && ($1 &- $0) % 4096 <= 8 },
                        "stamps out of order: \(video.counters.prefix(20))")
            }
        }

        @Test("8.3: protocol 5 applies a writable DP and reports it; a read-only or mistyped DP is reported back unchanged; 31 answers")
        func dataPointSetsAndQueries() async throws {
            try await withHarness(profile: "ac-doorbell.yaml", edit: Self.acDoorbell) { h in
                let set: JSONValue = .object(["protocol": .int(5), "t": .int(WallClock.nowSeconds()), "data": .object([
                    "devId": .string(h.devId), "uid": .string("user-alice"),
                    "dps": .object(["134": .bool(false), "136": .string("1"), "150": .string("yes"), "999": .bool(true)]),
                ])])
                try await Self.connectReport(h)
                let mark = h.wire.reports().count
                try await h.sendJSON(set)
                let report = try #require(await h.wire.waitForReport(afterCount: mark) { $0[134] != nil })
                #expect(report.dps.count == 3, "every DP the message set (changed or not) and nothing else")
                #expect(report[134] == .bool(false), "the writable DP was not applied")
                #expect(report[136] != .string("1"), "a read-only DP was applied")
                #expect(report[136] != nil && report[150] == .bool(true), "refused DPs are reported back with their value")
                #expect(report[999] == nil)
                #expect(await h.device.doorbellCounters.dpRefusals == 3)

                let query: JSONValue = .object(["protocol": .int(31), "t": .int(WallClock.nowSeconds()), "data": .object([
                    "devId": .string(h.devId), "uid": .string("user-alice"), "dpIds": .array([.int(134), .int(146)]),
                ])])
                let queried = h.wire.reports().count
                try await h.sendJSON(query)
                let answer = try #require(await h.wire.waitForReport(afterCount: queried) { _ in true })
                #expect(answer.dps.count == 2)
                #expect(answer[134] == .bool(false) && answer[146] == .string("1"))
            }
        }

        @Test("8.4: idle -> DP 149 false and asleep; 308 dropped and counted; the wake topic wakes after wakeLatency with every DP")
        func sleepAndWakeByTopic() async throws {
            try await withHarness(profile: "battery-doorbell.yaml", edit: Self.batteryDoorbell) { h in
                let asleep = try #require(await h.wire.waitForReport(within: .seconds(5)) { $0[149] == .bool(false) })
                #expect(asleep.dps.count == 1)
                #expect(await h.device.powerState == .asleep)

                // Asleep: a probe is dropped and counted.
                try await h.sendJSON(.object(["protocol": .int(309), "t": .int(WallClock.nowSeconds()), "data": .object([
                    "type": .string("ability_query"), "curId": .string("user-alice"), "reqId": .string("r1")])]))
                #expect(await h.deviceEvents.first { if case .refused(let why) = $0, why.contains("asleep") { true } else { nil } } != nil)

                // A wrong payload on the wake topic is ignored and counted.
                try await h.raw.publishAndWaitForAck(topic: "m/w/\(h.devId)", payload: [1, 2, 3, 4], qos: 1, retain: false,
                                                     timeout: .seconds(3))
                #expect(await h.deviceEvents.first { if case .refused(let why) = $0, why.contains("CRC32") { true } else { nil } } != nil)
                #expect(await h.device.powerState == .asleep)

                let mark = h.wire.reports().count
                let started = ContinuousClock.now
                try await h.raw.publishAndWaitForAck(topic: "m/w/\(h.devId)", payload: WakeCheck.payload(localKey: Array(h.profile.identity.localKey.utf8)),
                                                     qos: 1, retain: false, timeout: .seconds(3))
                let awake = try #require(await h.wire.waitForReport(afterCount: mark) { $0[149] == .bool(true) })
                let latency = ContinuousClock.now - started
                #expect(latency >= .milliseconds(280) && latency < .seconds(2), "awake after \(latency)")
                #expect(awake.dps.count == h.profile.dataPoints.ids.count, "on waking the device reports every DP")
                let counters = await h.device.doorbellCounters
                #expect(counters.droppedWhileAsleep >= 1 && counters.badWakes == 1)
            }
        }

        @Test("8.4: a protocol 5 setting DP 149 true wakes the device; a press wakes it at once")
        func wakeByDataPointAndPress() async throws {
            try await withHarness(profile: "battery-doorbell.yaml", edit: Self.batteryDoorbell) { h in
                _ = try #require(await h.wire.waitForReport(within: .seconds(5)) { $0[149] == .bool(false) })
                let mark = h.wire.reports().count
                try await h.sendJSON(.object(["protocol": .int(5), "t": .int(WallClock.nowSeconds()), "data": .object([
                    "devId": .string(h.devId), "uid": .string("user-alice"), "dps": .object(["149": .bool(true), "134": .bool(false)])])]))
                let awake = try #require(await h.wire.waitForReport(afterCount: mark) { $0[149] == .bool(true) })
                #expect(awake.dps.count > 2)
                // The held command's other DP is applied once awake and reported.
                #expect(await h.wire.waitForReport(afterCount: mark) { $0[134] == .bool(false) } != nil)

                let awakeMark = h.wire.reports().count
                _ = try #require(await h.wire.waitForReport(afterCount: awakeMark, within: .seconds(5)) { $0[149] == .bool(false) })
                let pressedAt = ContinuousClock.now
                _ = try await h.device.press()
                #expect(await h.wire.waitForDoorbellPress() != nil)
                #expect(await h.device.powerState == .awake)
                #expect(ContinuousClock.now - pressedAt < .milliseconds(250), "a press wakes at once, no latency")
            }
        }

        @Test("8.4: video sent drains the battery (DP 145 at each whole percent); crossing DP 147 reports DP 212 ipc_low_battery once")
        func batteryDrainsToLowBattery() async throws {
            try await withHarness(profile: "battery-doorbell.yaml", edit: {
                Self.batteryDoorbell(&$0)
                $0.power.sleepAfter = 30
                $0.power.source = .battery
                $0.power.battery = 22
                $0.power.lowBatteryThreshold = 20
                $0.power.drainPerStreamMinute = 60  // 1 % a second per stream
            }) { h in
                let (alice, _) = try await h.app("user-alice")
                let mark = h.wire.reports().count
                try await alice.openVideo(sessionId: "live-\(UInt32.random(in: 0...UInt32.max))", devId: h.devId)
                let at21 = try #require(await h.wire.waitForReport(afterCount: mark, within: .seconds(8)) { $0[145] == .int(21) })
                #expect(at21.dps.count == 1)
                let low = try #require(await h.wire.waitForAlert("ipc_low_battery", within: .seconds(8)))
                #expect(low["type"] == .string("none"))
                #expect(h.wire.reports().dropFirst(mark).contains { $0[145] == .int(20) })
                // Once: the next whole percent (19) comes without a second alert.
                _ = try #require(await h.wire.waitForReport(afterCount: mark, within: .seconds(5)) { $0[145] == .int(19) })
                let alerts = h.wire.reports().dropFirst(mark).filter { report in
                    guard case .string(let t)? = report[212], let d = Data(base64Encoded: t) else { return false }
                    return String(decoding: d, as: UTF8.self).contains("ipc_low_battery")
                }
                #expect(alerts.count == 1)
                #expect(await h.device.batteryPercent <= 19)
            }
        }

        @Test("8.2 + 4: the accepting user's link carries video; another user's offer is refused")
        func acceptThenVideo() async throws {
            try await withHarness(profile: "ac-doorbell.yaml", edit: {
                Self.acDoorbell(&$0)
                $0.capabilities.liveView = false  // else bob's offer is a live view, which the profile allows
            }) { h in
                let (alice, _) = try await h.app("user-alice")
                let (bob, _) = try await h.app("user-bob")
                let callId = try await h.device.press()
                _ = await h.wire.waitForDoorbellPress()
                try await Self.videoDoorbell(h, .accept, uid: "user-alice", callId: callId)
                _ = try #require(await h.wire.waitForDoorbell(.answered))

                try await bob.openVideo(sessionId: callId, devId: h.devId)
                #expect(await eventually(timeout: .seconds(5)) { await bob.disconnectReason(sessionId: callId) != nil },
                        "another user's offer for the call was not refused")

                try await alice.openVideo(sessionId: callId, devId: h.devId)
                #expect(await eventually(timeout: .seconds(10)) { (await alice.videoStats(sessionId: callId)?.framesDecoded ?? 0) >= 10 },
                        "no video on the accepting user's link")
                let stats = try #require(await alice.videoStats(sessionId: callId))
                #expect(stats.stampErrors == 0)
                try await Self.videoDoorbell(h, .stop, uid: "user-alice", callId: callId)
                #expect(await h.deviceEvents.first { $0.endedRecord }?.sessionId == callId)
            }
        }

        @Test("8.6: a 312 from the link's user is done (resCode 0); from another user or for no link, resCode -1")
        func streamControl() async throws {
            try await withHarness(profile: "ac-doorbell.yaml", edit: Self.acDoorbell) { h in
                let (alice, _) = try await h.app("user-alice")
                let callId = try await h.device.press()
                _ = await h.wire.waitForDoorbellPress()
                try await Self.videoDoorbell(h, .accept, uid: "user-alice", callId: callId)
                _ = try #require(await h.wire.waitForDoorbell(.answered))
                try await alice.openVideo(sessionId: callId, devId: h.devId)
                #expect(await eventually(timeout: .seconds(10)) { (await alice.videoStats(sessionId: callId)?.framesDecoded ?? 0) >= 1 })

                func send312(from user: String, session: String, value: Int64) async throws {
                    let m = StreamControlMessage(type: .speaker, header: SignalHeader(from: user, to: h.devId, sessionId: session),
                                                 body: .command(cmdValue: value))
                    try await h.sendRaw(h.seal(m.envelope(t: WallClock.nowSeconds()).encoded()))
                }
                try await send312(from: "user-alice", session: callId, value: 1)
                let done = try #require(await h.wire.waitForStreamControlReply(to: "user-alice"))
                #expect(done.resCode == 0)
                try await send312(from: "user-bob", session: callId, value: 1)
                #expect(await h.wire.waitForStreamControlReply(to: "user-bob")?.resCode == -1)
                try await send312(from: "user-alice", session: "no-such-session", value: 0)
                #expect(await h.wire.waitForStreamControlReply(to: "user-alice", count: 2)?.resCode == -1)
                #expect(await h.device.doorbellCounters.streamControlRefusals == 2)
            }
        }

        @Test("8.2: a video_doorbell message to a screen_ipc device gets stop invalid_params; a §3 call to a doorbell the §3 stop")
        func wrongCallKinds() async throws {
            try await withHarness { h in
                try await Self.videoDoorbell(h, .accept, uid: "user-alice", callId: "617bdf7a1732200000")
                let stop = try #require(await h.wire.waitForDoorbell(.stop))
                #expect(stop.reason == "invalid_params" && stop.uid == "user-alice")
            }
            try await withHarness(profile: "ac-doorbell.yaml", edit: Self.acDoorbell) { h in
                try await h.send(h.call(from: "user-alice", session: "user-alice-s1"))
                let stop = try #require(await h.wire.waitForSent(.stop).first)
                #expect(stop.reason == "invalid_params" && stop.targetId == "user-alice")
                #expect(await h.device.status.phase == .idle)
            }
        }
    }
}

// MARK: Reading section 8's messages off the out topic

extension WireTap {
    /// Every message the device published, opened as an app would (refused payloads skipped).
    func outMessages() -> [InboundMessage] {
        guard var opener = try? PayloadOpener(mode: security, localKey: localKey) else { return [] }
        return payloads(on: outTopic).compactMap { try? opener.openMessage($0).message }
    }

    func doorbellPresses() -> [DoorbellPressMessage] {
        outMessages().compactMap { if case .doorbellPress(let m) = $0 { m } else { nil } }
    }

    func doorbellMessages(_ event: DoorbellEvent) -> [VideoDoorbellMessage] {
        outMessages().compactMap { if case .videoDoorbell(let m) = $0, m.event == event { m } else { nil } }
    }

    func reports() -> [DPReport] {
        outMessages().compactMap { if case .dpReport(let r) = $0 { r } else { nil } }
    }

    func waitForDoorbellPress(within timeout: Duration = .seconds(5)) async -> DoorbellPressMessage? {
        _ = await eventually(timeout: timeout) { !self.doorbellPresses().isEmpty }
        return doorbellPresses().first
    }

    func waitForDoorbell(_ event: DoorbellEvent, within timeout: Duration = .seconds(5)) async -> VideoDoorbellMessage? {
        _ = await eventually(timeout: timeout) { !self.doorbellMessages(event).isEmpty }
        return doorbellMessages(event).first
    }

    func waitForDoorbell(_ event: DoorbellEvent, count: Int, within timeout: Duration = .seconds(5)) async -> [VideoDoorbellMessage] {
        _ = await eventually(timeout: timeout) { self.doorbellMessages(event).count >= count }
        return doorbellMessages(event)
    }

    /// The first report from the `afterCount`-th on (`reports().count` taken before the action)
    /// that matches.
    func waitForReport(afterCount mark: Int = 0, within timeout: Duration = .seconds(5),
                       _ match: @escaping @Sendable (DPReport) -> Bool) async -> DPReport? {
        let pick: @Sendable () -> DPReport? = { self.reports().dropFirst(mark).first(where: match) }
        _ = await eventually(timeout: timeout) { pick() != nil }
        return pick()
    }

    /// The DP 212 alert with `cmd`, decoded from its base64 JSON.
    func waitForAlert(_ cmd: String, within timeout: Duration = .seconds(5)) async -> [String: JSONValue]? {
        let pick: @Sendable () -> [String: JSONValue]? = {
            for report in self.reports() {
                guard case .string(let text)? = report[212], let data = Data(base64Encoded: text),
                      case .object(let o)? = try? JSONValue.parse(Array(data)), o["cmd"] == .string(cmd) else { continue }
                return o
            }
            return nil
        }
        _ = await eventually(timeout: timeout) { pick() != nil }
        return pick()
    }

    func waitForStreamControlReply(to user: String, count: Int = 1, within timeout: Duration = .seconds(5)) async -> StreamControlMessage? {
        let replies: @Sendable () -> [StreamControlMessage] = {
            self.outMessages().compactMap { if case .streamControl(let m) = $0, m.header.to == user, m.resCode != nil { m } else { nil } }
        }
        _ = await eventually(timeout: timeout) { replies().count >= count }
        let all = replies()
        return all.count >= count ? all[count - 1] : nil
    }
}
