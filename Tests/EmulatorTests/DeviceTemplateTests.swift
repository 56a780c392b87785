import CallRuntime
import DeviceProfile
@testable import Emulator
import IPCEmuTesting
import IPCWire
import MQTTTransport
import Testing
import TestSupport

/// docs/fleet.md "Memory per device": the devices of one template share it by reference and keep
/// only what is their own, yet each reads back exactly the profile it was made from.
@Suite("Devices of one template share it")
struct DeviceTemplateTests {
    private static func device(_ profile: DeviceProfile, template: DeviceTemplate?, on bus: InProcessBus) throws -> Device {
        let options = Device.clientOptions(profile: profile, connection: MQTTClientOptions(clientID: ""))
        return try Device(profile: profile, template: template, transport: bus.transport(options: options))
    }

    @Test("Fleet instances share the template and read back their own profile, topics and credentials")
    func instancesShare() throws {
        let bus = InProcessBus()
        var template = DeviceProfile.testDoorbell(devId: "tpl-{index:3}")
        template.identity.name = template.identity.devId   // a name that follows the devId
        template.broker.username = "user-{devId}"          // credentials filled in per device
        let plan = try FleetPlan(groups: [FleetPlan.Group(profile: template, count: 4)])
        let shared = try DeviceTemplate(template)
        for position in 0..<4 {
            let profile = try plan.profile(at: position)
            let device = try Self.device(profile, template: shared, on: bus)
            #expect(device.template === shared)
            #expect(device.profile == profile)
            #expect(device.topics == profile.resolvedTopics)
            #expect(device.devId == "tpl-00\(position)")
        }
    }

    @Test("A device's meta and 309 answer are its profile's (devId, category, skill, awake), made from the template's", arguments: [false, true])
    func metaFromTemplate(lowPower: Bool) throws {
        let bus = InProcessBus()
        var template = DeviceProfile.testDoorbell(devId: "meta-{index:2}")
        template.power.lowPower = lowPower
        let plan = try FleetPlan(groups: [FleetPlan.Group(profile: template, count: 3)])
        let shared = try DeviceTemplate(template)
        for position in 0..<3 {
            let profile = try plan.profile(at: position)
            let device = try Self.device(profile, template: shared, on: bus)
            for awake in [false, true] {
                let meta = device.meta(awake: awake)
                #expect(meta == profile.meta(awake: awake))
                #expect(meta.devId == "meta-0\(position)" && meta.skillText == profile.skill.jsonString)
                #expect(meta.awake == (lowPower ? awake : nil))
            }
        }
    }

    @Test("The meta's bytes made once per template are the full encoding's, byte for byte, for any devId and t; a devId JSON escapes is encoded in full",
          arguments: [false, true])
    func metaBytesFromTemplate(lowPower: Bool) throws {
        var template = DeviceProfile.testDoorbell(devId: "wire-{index:2}")
        template.power.lowPower = lowPower
        let shared = try DeviceTemplate(template)
        #expect(shared.metaWires.awake != nil && shared.metaWires.asleep != nil)
        let devIds = ["wire-00", "w", "a.b-c_d", "häus-ß-7", String(repeating: "x", count: 300)]
        let times: [Int64] = [0, 1_764_000_000, -5, Int64.max, MetaWire.tMark]
        for devId in devIds {
            for t in times {
                for awake in [false, true] {
                    var profile = template
                    profile.identity.devId = devId
                    var sealer = try PayloadSealer(mode: .plain, localKey: "", from: SealHeader.deviceFrom)
                    let full = try sealer.seal(profile.meta(awake: awake).envelope(t: t))
                    let made = shared.metaPayload(devId: devId, awake: awake, t: t)
                    #expect(made == full, "devId \(devId) t \(t) awake \(awake)")
                }
            }
        }
        // A quote, a backslash or a control character is escaped by JSON: no shortcut.
        for devId in ["a\"b", "a\\b", "a\nb"] {
            #expect(shared.metaPayload(devId: devId, awake: true, t: 1) == nil)
        }
        // A devId as long as the wire's limit allows no payload either (encoded in full, refused there).
        #expect(shared.metaPayload(devId: String(repeating: "y", count: maxPayloadBytes), awake: true, t: 1) == nil)
    }

    @Test("The last will's topic is the profile's online topic, wherever {devId} stands in it")
    func willTopic() throws {
        var profile = DeviceProfile.testDoorbell(devId: "will-7")
        for meta in ["smart/device/meta/{devId}", "{devId}/meta", "a/{devId}/b/{devId}"] {
            profile.topics.meta = meta
            let options = Device.clientOptions(profile: profile, connection: MQTTClientOptions(clientID: ""))
            #expect(options.will?.topic == profile.resolvedTopics.online)
        }
    }

    @Test("Devices made on one runtime share it: its clock, timers, feeds and log")
    func sharedRuntime() throws {
        let bus = InProcessBus()
        let template = DeviceProfile.testDoorbell(devId: "rt-{index}")
        let shared = try DeviceTemplate(template)
        let timers = TimerScheduler(name: "runtime-test")
        defer { timers.shutdown() }
        let runtime = DeviceRuntime(timers: timers)
        var devices: [Device] = []
        for index in 0..<2 {
            let profile = try template.instance(index: index)
            let options = Device.clientOptions(profile: profile, connection: MQTTClientOptions(clientID: ""))
            devices.append(try Device(profile: profile, template: shared, transport: bus.transport(options: options),
                                      runtime: runtime))
        }
        #expect(devices[0].runtime === devices[1].runtime)
        #expect(devices[0].scheduler === timers)
        #expect(devices[1].scheduler === timers)
    }

    @Test("Only the devId differs: the device reads back its profile with the template's name")
    func devIdOnly() throws {
        let bus = InProcessBus()
        let template = DeviceProfile.testDoorbell(devId: "plain-{index}")
        let shared = try DeviceTemplate(template)
        let profile = try template.instance(index: 7)
        let device = try Self.device(profile, template: shared, on: bus)
        #expect(device.template === shared)
        #expect(device.profile == profile)
        #expect(device.profile.identity.name == "Test doorbell")
    }

    @Test("A profile that differs beyond identity and broker gets a template of its own")
    func differentProfileNotShared() throws {
        let bus = InProcessBus()
        let template = DeviceProfile.testDoorbell(devId: "a-{index}")
        let shared = try DeviceTemplate(template)
        var other = try template.instance(index: 1)
        other.behaviour.household = ["someone-else"]
        let device = try Self.device(other, template: shared, on: bus)
        #expect(device.template !== shared)
        #expect(device.profile == other)
        var category = try template.instance(index: 2)
        category.identity.category = "other_category"
        let second = try Self.device(category, template: shared, on: bus)
        #expect(second.template !== shared)
        #expect(second.profile == category)
    }

    @Test("A topic template is filled byte for byte: every {devId}, none at all, non-ASCII around it, a brace that is not one")
    func fillTopics() {
        #expect(Device.fill("smart/device/meta/{devId}", "dev-1", suffix: "/online") == "smart/device/meta/dev-1/online")
        #expect(Device.fill("{devId}/a/{devId}", "x") == "x/a/x")
        #expect(Device.fill("plain/topic", "x") == "plain/topic")
        #expect(Device.fill("häus/{devId}/ü{dev", "ß") == "häus/ß/ü{dev")
        #expect(Device.fill("", "x", suffix: "/s") == "/s")
    }
}
