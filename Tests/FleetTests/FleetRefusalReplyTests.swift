import CallEngine
import CallRuntime
import Emulator
import Foundation
import IPCWire
import MQTTTransport
import Testing
import TestSupport

/// PROTOCOL.md 3.4 (issue 23) in a fleet: each device of a fleet answers refused messages at most
/// 5 times a second per sender, as `ipcemu run` does (the fleet's devices are the same `Device`
/// with the same limiter), and counts the rest. Through a real broker on the real clock.
@Suite("Fleet: replies to refused messages are limited (3.4)", .timeLimit(.minutes(8)), .heavy)
struct FleetRefusalReplyTests {
    @Test("20 stray events from one sender to a fleet device: 5 stops per started second, the rest counted; its neighbour unaffected")
    func perSenderInFleet() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let plan = try FleetPlan(groups: [.init(profile: doorbellTemplate(prefix: "limit"), count: 2)])
        let fleet = try Fleet(plan: plan, positions: 0..<plan.total,
                              options: Fleet.Options(connection: broker.clientOptions(clientID: "fleet")))
        #expect(await fleet.start().online == 2)
        let target = try #require(fleet.devices.first)
        let neighbour = try #require(fleet.devices.last)
        let outTopic = "smart/device/out/\(target.devId)"
        let watcher = try await MessageCollector.start(broker: broker, filters: [outTopic], clientID: "out-watcher")
        let mallory = try MQTTClient(options: broker.clientOptions(clientID: "mallory"))
        mallory.connect()
        #expect(await mallory.waitUntilConnected(timeout: .seconds(5)))

        let began = ContinuousClock.now
        for i in 0..<20 {
            let stray = CallMessage(event: .hangUp, curId: "mallory", targetId: target.devId, sessionId: "nosuch-\(i)")
            try mallory.publish(topic: "smart/device/in/\(target.devId)", payload: stray.envelope(t: WallClock.nowSeconds()).encoded(), qos: 1)
        }
        // A probe after them: its answer proves the device has handled all twenty (in order).
        try mallory.publish(topic: "smart/device/in/\(target.devId)",
                            payload: AbilityQuery(curId: "probe", reqId: "after").envelope(t: WallClock.nowSeconds()).encoded(), qos: 1)
        let decoded = { watcher.messages(on: outTopic).compactMap { try? InboundMessage.decode(payload: $0.payload).message } }
        #expect(await eventually(timeout: .seconds(10)) {
            decoded().contains { if case .abilityAnswer = $0 { true } else { false } }
        })
        let elapsed = ContinuousClock.now - began
        let stops = decoded().filter { if case .call(let m) = $0 { m.event == .stop && m.targetId == "mallory" } else { false } }.count
        let dropped = target.refusals.droppedReplies
        #expect(stops <= 5 * (Int(elapsed.components.seconds) + 1), "\(stops) stops in \(elapsed)")
        #expect(stops + (dropped[.sender] ?? 0) == 20, "\(stops) stops, dropped \(dropped)")
        #expect(dropped[.device] == 0)
        #expect(target.refusals.totals[.call] == 20)
        #expect(neighbour.refusals.droppedReplies == [.sender: 0, .device: 0])

        mallory.close()
        await watcher.stop()
        _ = await fleet.stop()
    }
}
