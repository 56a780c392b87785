import Foundation
import IPCWire
import Testing
import TestSupport
@testable import DeviceProfile

/// The sections of PROTOCOL.md 8 and 9 (`doorbell`, `power`, `dps`, `push`, `cloud`), the skill of
/// 8.7, and the shipped doorbell profiles.
@Suite("Profile doorbell, power, dps, push, cloud")
struct DoorbellProfileTests {
    static let allDPs = [115, 134, 136, 145, 146, 147, 149, 150, 151, 154, 185, 212]

    func parse(_ body: String, file: String = "/etc/ipcemu/door.yaml") throws -> DeviceProfile {
        try DeviceProfile.parse(yaml: identityLines + "\n" + body, fileName: file)
    }

    @Test("left out: a screen IPC, always awake on an adapter, no DPs, no pushes, no cloud")
    func defaults() throws {
        let p = try DeviceProfile.parse(yaml: identityLines)
        #expect(p.doorbell == DeviceProfile.Doorbell(kind: .screenIPC, ringTimeout: 25, messages: false,
                                                     messageWindow: 15, messageSeconds: 10))
        #expect(p.power == DeviceProfile.Power(lowPower: false, sleepAfter: 180, wakeLatency: 1, source: .adapter,
                                               battery: 100, drainPerStreamMinute: 1, lowBatteryThreshold: 20))
        #expect(p.dataPoints.ids.isEmpty)
        #expect(p.push == DeviceProfile.Push())
        #expect(!p.push.isEnabled)
        #expect(p.cloud == nil)
        #expect(p.dataPointStartValues.isEmpty)
        #expect(p.meta.awake == nil)
        #expect(p.meta(awake: false).awake == nil)
        #expect(p.warnings.isEmpty)
    }

    @Test("kind doorbell: low power on a battery with every DP of 8.3; ac_doorbell: awake on an adapter with every DP")
    func kindDefaults() throws {
        let battery = try parse("doorbell:\n  kind: doorbell\n")
        #expect(battery.doorbell.kind == .doorbell)
        #expect(battery.doorbell.kind.isTuyaDoorbell)
        #expect(battery.power == DeviceProfile.Power(lowPower: true, source: .battery))
        #expect(battery.power.sleepAfterMs == 180_000)
        #expect(battery.power.wakeLatencyMs == 1000)
        #expect(battery.power.drains)
        #expect(battery.dataPoints.ids == Self.allDPs)
        #expect(battery.dataPointStartValues == [145: .int(100), 146: .string("0"), 147: .int(20), 149: .bool(true)])
        let ac = try parse("doorbell:\n  kind: ac_doorbell\n")
        #expect(ac.power == DeviceProfile.Power(lowPower: false, source: .adapter))
        #expect(!ac.power.drains)
        #expect(ac.dataPoints.ids == Self.allDPs)
        #expect(ac.dataPointStartValues[146] == .string("1"))
        #expect(ac.doorbell.ringTimeoutMs == 25_000)
        #expect(ac.doorbell.messageWindowMs == 15_000)
        #expect(ac.summary.hasSuffix("doorbell ac_doorbell"))
        #expect(battery.summary.hasSuffix("doorbell doorbell, low power (sleeps after 180 s)"))
    }

    @Test("every field as written")
    func asWritten() throws {
        let p = try parse("""
            doorbell:
              kind: doorbell
              ringTimeout: 12.5
              messages: true
              messageWindow: 20
              messageSeconds: 4
            power:
              lowPower: true
              sleepAfter: 5
              wakeLatency: 0.25
              source: battery
              battery: 37
              drainPerStreamMinute: 0.5
              lowBatteryThreshold: 30
            dps: [149, 145, 136]
            push:
              url: https://push.example.test/ring
              apnsDir: apns
            cloud:
              productKey: keyabc123
              uuid: tuya1234abcd5678
              authkey: 0123456789abcdefABCDEF0123456789
              region: EU
              stateDir: state/door
            """)
        #expect(p.doorbell == DeviceProfile.Doorbell(kind: .doorbell, ringTimeout: 12.5, messages: true,
                                                     messageWindow: 20, messageSeconds: 4))
        #expect(p.doorbell.ringTimeoutMs == 12_500)
        #expect(p.power == DeviceProfile.Power(lowPower: true, sleepAfter: 5, wakeLatency: 0.25, source: .battery,
                                               battery: 37, drainPerStreamMinute: 0.5, lowBatteryThreshold: 30))
        #expect(p.power.wakeLatencyMs == 250)
        #expect(p.dataPoints.ids == [136, 145, 149])
        #expect(p.dataPointStartValues == [145: .int(37), 149: .bool(true)])
        #expect(p.push == DeviceProfile.Push(url: "https://push.example.test/ring", apnsDir: "/etc/ipcemu/apns"))
        #expect(p.cloud == DeviceProfile.Cloud(productKey: "keyabc123", uuid: "tuya1234abcd5678",
                                               authkey: "0123456789abcdefABCDEF0123456789", region: "EU",
                                               stateDir: "/etc/ipcemu/state/door"))
        #expect(p.cloud?.authkeyBytes.count == 32)
        #expect(p.warnings.isEmpty)
        #expect(p.meta.awake == true)
        #expect(p.meta(awake: false).awake == false)
        #expect(p.summary.hasSuffix("cloud"))
    }

    @Test("fields that do not apply are ignored with a warning naming them")
    func warnings() throws {
        let screen = try parse("doorbell:\n  ringTimeout: 10\n")
        #expect(screen.warnings.map(\.field) == ["doorbell.ringTimeout"])
        #expect(screen.warnings.first?.description.contains("/etc/ipcemu/door.yaml:7: warning: doorbell.ringTimeout: ") == true)
        let noMessages = try parse("doorbell:\n  kind: ac_doorbell\n  messageSeconds: 3\n")
        #expect(noMessages.warnings.map(\.field) == ["doorbell.messageSeconds"])
        let awake = try parse("power:\n  sleepAfter: 30\n  source: adapter\n  drainPerStreamMinute: 2\n")
        #expect(awake.warnings.map(\.field) == ["power.sleepAfter", "power.drainPerStreamMinute"])
    }

    static let cases: [BadCase] = [
        BadCase(name: "unknown kind", yaml: identityLines + "\ndoorbell:\n  kind: chime\n",
                kind: .invalidValue, field: "doorbell.kind", line: 7,
                message: "expected one of screen_ipc, ac_doorbell, doorbell, got 'chime'"),
        BadCase(name: "ring timeout zero", yaml: identityLines + "\ndoorbell:\n  kind: doorbell\n  ringTimeout: 0\n",
                kind: .invalidValue, field: "doorbell.ringTimeout", line: 8, message: "expected a positive number of seconds, got 0"),
        BadCase(name: "ring timeout too long", yaml: identityLines + "\ndoorbell:\n  kind: doorbell\n  ringTimeout: 601\n",
                kind: .invalidValue, field: "doorbell.ringTimeout", line: 8, message: "at most 600 s, got 601"),
        BadCase(name: "ring timeout a word", yaml: identityLines + "\ndoorbell:\n  ringTimeout: long\n",
                kind: .wrongType, field: "doorbell.ringTimeout", line: 7, message: "got 'long'"),
        BadCase(name: "messages not a bool", yaml: identityLines + "\ndoorbell:\n  messages: maybe\n",
                kind: .wrongType, field: "doorbell.messages", line: 7, message: "expected true or false, got 'maybe'"),
        BadCase(name: "message longer than 10 s", yaml: identityLines + "\ndoorbell:\n  kind: doorbell\n  messages: true\n  messageSeconds: 11\n",
                kind: .invalidValue, field: "doorbell.messageSeconds", line: 9, message: "expected an integer from 1 to 10, got 11"),
        BadCase(name: "message window negative", yaml: identityLines + "\ndoorbell:\n  messageWindow: -1\n",
                kind: .invalidValue, field: "doorbell.messageWindow", line: 7, message: "positive number of seconds"),
        BadCase(name: "messages without video", yaml: identityLines + "\ncapabilities:\n  video: none\ndoorbell:\n  kind: doorbell\n  messages: true\n",
                kind: .inconsistent, field: "doorbell.messages", line: 10, message: "capabilities.video is none"),
        BadCase(name: "unknown doorbell key", yaml: identityLines + "\ndoorbell:\n  ringtimeout: 3\n",
                kind: .unknownKey, field: "doorbell.ringtimeout", line: 7, message: "did you mean 'ringTimeout'?"),
        BadCase(name: "sleepAfter a word", yaml: identityLines + "\npower:\n  sleepAfter: three\n",
                kind: .wrongType, field: "power.sleepAfter", line: 7, message: "got 'three'"),
        BadCase(name: "sleepAfter over a day", yaml: identityLines + "\npower:\n  lowPower: true\n  sleepAfter: 86401\n",
                kind: .invalidValue, field: "power.sleepAfter", line: 8, message: "at most 86400 s"),
        BadCase(name: "wake latency over a minute", yaml: identityLines + "\npower:\n  wakeLatency: 61\n",
                kind: .invalidValue, field: "power.wakeLatency", line: 7, message: "at most 60 s, got 61"),
        BadCase(name: "battery over 100", yaml: identityLines + "\npower:\n  battery: 101\n",
                kind: .invalidValue, field: "power.battery", line: 7, message: "expected an integer from 0 to 100, got 101"),
        BadCase(name: "threshold negative", yaml: identityLines + "\npower:\n  lowBatteryThreshold: -1\n",
                kind: .invalidValue, field: "power.lowBatteryThreshold", line: 7, message: "from 0 to 100, got -1"),
        BadCase(name: "unknown source", yaml: identityLines + "\npower:\n  source: solar\n",
                kind: .invalidValue, field: "power.source", line: 7, message: "expected one of battery, adapter, got 'solar'"),
        BadCase(name: "negative drain", yaml: identityLines + "\npower:\n  source: battery\n  drainPerStreamMinute: -1\n",
                kind: .invalidValue, field: "power.drainPerStreamMinute", line: 8, message: "from 0 to 100, got -1"),
        BadCase(name: "drain a word", yaml: identityLines + "\npower:\n  drainPerStreamMinute: lots\n",
                kind: .wrongType, field: "power.drainPerStreamMinute", line: 7, message: "got 'lots'"),
        BadCase(name: "lowPower not a bool", yaml: identityLines + "\npower:\n  lowPower: 1\n",
                kind: .wrongType, field: "power.lowPower", line: 7, message: "expected true or false, got '1'"),
        BadCase(name: "a sleeping ac_doorbell", yaml: identityLines + "\ndoorbell:\n  kind: ac_doorbell\npower:\n  lowPower: true\n",
                kind: .inconsistent, field: "power.lowPower", line: 9, message: "always awake"),
        BadCase(name: "an unknown DP id", yaml: identityLines + "\ndps: [134, 999]\n",
                kind: .invalidValue, field: "dps[1]", line: 6, message: "unknown DP id 999: expected one of 115 movement_detect_pic"),
        BadCase(name: "a DP id that is a word", yaml: identityLines + "\ndps:\n  - 134\n  - awake\n",
                kind: .wrongType, field: "dps[1]", line: 8, message: "expected a DP id"),
        BadCase(name: "a DP twice", yaml: identityLines + "\ndps: [134, 134]\n",
                kind: .invalidValue, field: "dps[1]", line: 6, message: "duplicate entry 134"),
        BadCase(name: "dps not a list", yaml: identityLines + "\ndps: 149\n",
                kind: .wrongType, field: "dps", line: 6, message: "expected a list of DP ids"),
        BadCase(name: "a low-power device without DP 149", yaml: identityLines + "\ndoorbell:\n  kind: doorbell\ndps: [145]\n",
                kind: .inconsistent, field: "dps", line: 8, message: "list 149"),
        BadCase(name: "push url not http", yaml: identityLines + "\npush:\n  url: ftp://push.example.test/\n",
                kind: .invalidValue, field: "push.url", line: 7, message: "expected an http:// or https:// url"),
        BadCase(name: "push url without host", yaml: identityLines + "\npush:\n  url: \"http://\"\n",
                kind: .invalidValue, field: "push.url", line: 7, message: "http://"),
        BadCase(name: "push unknown key", yaml: identityLines + "\npush:\n  apnsdir: /tmp\n",
                kind: .unknownKey, field: "push.apnsdir", line: 7, message: "did you mean 'apnsDir'?"),
        BadCase(name: "cloud without authkey", yaml: identityLines + "\ncloud:\n  productKey: p1\n  uuid: u1\n",
                kind: .missingField, field: "cloud.authkey", line: 7, message: "32 letters or digits"),
        BadCase(name: "authkey 31 characters", yaml: identityLines + "\ncloud:\n  productKey: p1\n  uuid: u1\n  authkey: 0123456789abcdef0123456789abcde\n",
                kind: .invalidValue, field: "cloud.authkey", line: 9, message: "expected exactly 32 ASCII letters or digits, got 31 characters"),
        BadCase(name: "authkey with a symbol", yaml: identityLines + "\ncloud:\n  productKey: p1\n  uuid: u1\n  authkey: \"0123456789abcdef0123456789abcd!f\"\n",
                kind: .invalidValue, field: "cloud.authkey", line: 9, message: "got the character '!'"),
        BadCase(name: "productKey with a space", yaml: identityLines + "\ncloud:\n  productKey: a b\n  uuid: u1\n  authkey: 0123456789abcdef0123456789abcdef\n",
                kind: .invalidValue, field: "cloud.productKey", line: 7, message: "got 'a b'"),
        BadCase(name: "iotdns CA without an address", yaml: identityLines + "\ncloud:\n  productKey: p1\n  uuid: u1\n  authkey: 0123456789abcdef0123456789abcdef\n  iotdnsCAFile: /dev/null\n",
                kind: .inconsistent, field: "cloud.iotdnsCAFile", line: 10, message: "goes with iotdnsURL"),
        BadCase(name: "iotdns not https", yaml: identityLines + "\ncloud:\n  productKey: p1\n  uuid: u1\n  authkey: 0123456789abcdef0123456789abcdef\n  iotdnsURL: http://dns.test/\n",
                kind: .invalidValue, field: "cloud.iotdnsURL", line: 10, message: "https://"),
        BadCase(name: "a misspelt section", yaml: identityLines + "\ndoorbel:\n  kind: doorbell\n",
                kind: .unknownKey, field: "doorbel", line: 6, message: "did you mean 'doorbell'?"),
    ]

    @Test("reports the first mistake with its field, line and what was expected", arguments: cases)
    func bad(_ c: BadCase) {
        do {
            let profile = try DeviceProfile.parse(yaml: c.yaml, fileName: "bad.yaml")
            Issue.record("parsed without error: \(profile.summary)")
        } catch {
            #expect(error.kind == c.kind, "\(error)")
            #expect(error.field == c.field, "\(error)")
            if let line = c.line { #expect(error.line == line, "\(error)") }
            #expect(error.message.contains(c.message), "\(error)")
        }
    }

    @Test("the DP ids a profile knows are the DP store's (PROTOCOL.md 8.3's table)")
    func knownIds() {
        #expect(DeviceProfile.DataPoints.allKnownIds == Self.allDPs)
        #expect(DeviceProfile.DataPoints.known[149] == "wireless_awake")
        #expect(DeviceProfile.DataPoints.known[212] == "initiative_message")
    }

    // MARK: Skill (8.7)

    @Test("skill of the screen IPC doorbell: speaker and clarity, no lowPower key, PCMA only, H.264 main and sub")
    func skillScreenIPC() throws {
        let p = try shipped("doorbell.yaml")
        let skill = try DeviceSkill.decode(p.skill.jsonString, field: "skill")
        #expect(skill == DeviceSkill(
            webrtc: 48, lowPower: false, audios: [.init(channels: 1, dataBit: 16, codecType: 106, sampleRate: 8000)],
            videos: [
                .init(streamType: 2, codecType: 2, width: 1280, height: 720, sampleRate: 90_000, profileId: "42e01f"),
                .init(streamType: 4, codecType: 2, width: 640, height: 360, sampleRate: 90_000, profileId: "42e01f"),
            ]))
        #expect(!p.skill.jsonString.contains("lowPower"))
        #expect(p.skill.jsonString == #"{"audios":[{"channels":1,"codecType":106,"dataBit":16,"sampleRate":8000}],"#
                + #""videos":[{"codecType":2,"height":720,"profileId":"42e01f","sampleRate":90000,"streamType":2,"width":1280},"#
                + #"{"codecType":2,"height":360,"profileId":"42e01f","sampleRate":90000,"streamType":4,"width":640}],"webrtc":48}"#)
    }

    @Test("skill of the battery doorbell: lowPower 1; of the ac doorbell: none; meta carries skill, category and awake")
    func skillDoorbells() throws {
        let battery = try shipped("battery-doorbell.yaml")
        let b = try DeviceSkill.decode(battery.skill.jsonString, field: "skill")
        #expect(b.lowPower == 1)
        #expect(b.webrtc == DeviceSkill.speakerBit | DeviceSkill.clarityBit)
        #expect(b.videos.map(\.streamType) == [2, 4])
        #expect(b.videos.map { "\($0.width)x\($0.height)" } == ["1280x720", "640x360"])
        #expect(battery.skill.jsonString.contains(#""lowPower":1"#))
        let ac = try shipped("ac-doorbell.yaml")
        #expect(try DeviceSkill.decode(ac.skill.jsonString, field: "skill").lowPower == nil)

        guard case .object(let awake) = battery.meta.envelopeData,
              case .object(let asleep) = battery.meta(awake: false).envelopeData,
              case .object(let acMeta) = ac.meta.envelopeData
        else {
            Issue.record("meta body is not an object")
            return
        }
        #expect(awake["category"] == .string("dghsxj"))
        #expect(awake["awake"] == .bool(true))
        #expect(asleep["awake"] == .bool(false))
        #expect(acMeta["awake"] == nil)
        #expect(acMeta["category"] == .string("sp"))
        guard case .string(let skillText) = awake["skill"] else {
            Issue.record("no skill string in the meta")
            return
        }
        #expect(try DeviceSkill.decode(skillText, field: "skill") == battery.skill)
        // The meta and the probe answer decode back to the same values.
        let decoded = try AbilityAnswer.decode(envelopeData: battery.meta(awake: false).envelopeData)
        #expect(decoded == battery.meta(awake: false))
        let query = AbilityQuery(curId: "user-alice", reqId: "r1")
        let answer = try AbilityAnswer.decode(envelopeData: battery.meta.answering(query).envelopeData)
        #expect(answer.skill == battery.skill)
        #expect(answer.awake == true)
    }

    @Test("skill codec types: H.265 only is codecType 4; audio without PCMA has no audios; no audio, no speaker")
    func skillVariants() throws {
        let hevc = try parse("capabilities:\n  video:\n    codecs: [H265]\n")
        #expect(hevc.skill.videos.map(\.codecType) == [4, 4])
        #expect(hevc.skill.videos.map(\.profileId) == ["1", "1"])
        let both = try parse("capabilities:\n  video:\n    codecs: [H264, H265]\n")
        #expect(both.skill.videos.map(\.codecType) == [2, 2])
        let opus = try parse("capabilities:\n  audio:\n    codecs: [OPUS]\n")
        #expect(opus.skill.audios.isEmpty)
        let mute = try parse("capabilities:\n  audio: none\n  channelTypes: [1]\n")
        #expect(mute.skill.webrtc == DeviceSkill.clarityBit)
        let blind = try parse("capabilities:\n  video: none\n  channelTypes: [0]\n")
        #expect(blind.skill.webrtc == DeviceSkill.speakerBit)
        #expect(blind.skill.videos.isEmpty)
    }

    @Test("a skill string that is not skill JSON is refused, naming the field")
    func badSkill() throws {
        let p = try shipped("battery-doorbell.yaml")
        guard case .object(var body) = p.meta.envelopeData else { return }
        body["skill"] = .string("{\"webrtc\":\"many\"}")
        #expect(throws: WireError.self) { try AbilityAnswer.decode(envelopeData: .object(body)) }
        do {
            _ = try AbilityAnswer.decode(envelopeData: .object(body))
        } catch {
            #expect("\(error)".contains("data.skill"))
        }
        body["skill"] = .int(3)
        #expect(throws: WireError.wrongType(field: "data.skill", expected: "string")) {
            try AbilityAnswer.decode(envelopeData: .object(body))
        }
        body["skill"] = nil
        body["awake"] = .string("yes")
        #expect(throws: WireError.wrongType(field: "data.awake", expected: "boolean")) {
            try AbilityAnswer.decode(envelopeData: .object(body))
        }
    }

    // MARK: Shipped doorbell profiles

    @Test("ac-doorbell.yaml: ac_doorbell, category sp, awake on an adapter, messages on, every DP")
    func shippedAC() throws {
        let p = try shipped("ac-doorbell.yaml")
        #expect(p.identity.devId == "ipcemu-acdoor-0001")
        #expect(p.identity.category == "sp")
        #expect(p.doorbell == DeviceProfile.Doorbell(kind: .acDoorbell, ringTimeout: 25, messages: true,
                                                     messageWindow: 15, messageSeconds: 10))
        #expect(!p.power.lowPower)
        #expect(p.power.source == .adapter)
        #expect(p.dataPoints.ids == Self.allDPs)
        #expect(p.warnings.isEmpty)
    }

    @Test("battery-doorbell.yaml: doorbell, category dghsxj, sleeps after 60 s, battery, every DP")
    func shippedBattery() throws {
        let p = try shipped("battery-doorbell.yaml")
        #expect(p.identity.devId == "ipcemu-battdoor-0001")
        #expect(p.identity.category == "dghsxj")
        #expect(p.doorbell.kind == .doorbell)
        #expect(p.power == DeviceProfile.Power(lowPower: true, sleepAfter: 60, wakeLatency: 1, source: .battery,
                                               battery: 100, drainPerStreamMinute: 1, lowBatteryThreshold: 20))
        #expect(p.power.sleepAfterMs == 60_000)
        #expect(p.dataPoints.ids == Self.allDPs)
        #expect(p.warnings.isEmpty)
        let ids = try shippedProfiles.map { try DeviceProfile.load(path: $0).identity.devId }
        #expect(Set(ids).count == ids.count, "shipped devIds must be distinct: \(ids)")
    }

    @Test("ipcemu profile check names a wrong doorbell field with file and line")
    func cli() async throws {
        guard FileManager.default.isExecutableFile(atPath: ipcemuBinary) else {
            Issue.record("no ipcemu binary at \(ipcemuBinary): run `swift build --product ipcemu` first")
            return
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ipcemu-bad-door-\(UUID().uuidString).yaml").path
        try Data((identityLines + "\ndoorbell:\n  kind: doorbell\n  messageSeconds: 30\n").utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let battery = packageRoot.appendingPathComponent("device-profiles/battery-doorbell.yaml").path
        let run = try await CLIRun.ipcemu(["profile", "check", battery, path])
        #expect(run.status == 1)
        #expect(run.stdout.contains("\(battery): ok (devId ipcemu-battdoor-0001, category dghsxj"))
        #expect(run.stdout.contains("doorbell doorbell, low power (sleeps after 60 s)"))
        #expect(run.stderr == "\(path):8: doorbell.messageSeconds: expected an integer from 1 to 10, got 30\n")
    }
}
