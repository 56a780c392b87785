import AppSimulator
import DeviceProfile
import Emulator
import Foundation
import IPCWire
import MQTTTransport
import Testing
import TestSupport

/// What SIGTERM does to a fleet (`Fleet.stop`, docs/fleet.md "SIGTERM"), checked from outside as
/// PROTOCOL.md 3.3 says: every answered call gets `hang_up` with reason `shutdown`, and by the time
/// `stop` returns every device's retained status is its own `{"online":false,"t":...}`, left by a
/// clean disconnect (no last will).
@Suite("Fleet stop", .serialized, .timeLimit(.minutes(8)), .heavy)
struct FleetStopTests {
    @Test("stop: calls in progress get hang_up (shutdown); when it returns every retained status is the device's own offline, and no will was published")
    func stopEndsCallsAndLeavesEveryoneOffline() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        var door = try doorbellTemplate(prefix: "stop")
        door.behaviour.answerPolicy = .answer(afterSeconds: 0)
        let plan = try FleetPlan(groups: [.init(profile: door, count: 60)])
        let fleet = try Fleet(plan: plan, positions: 0..<plan.total,
                              options: Fleet.Options(connection: broker.clientOptions(clientID: "fleet")))
        let report = await fleet.start()
        #expect(report.online == 60, "\(report)")
        let ids = Set(fleet.devices.map(\.devId))

        // Three calls, answered, still going when the fleet stops.
        var apps: [(AppUser, String, AsyncStream<AppEvent>.Iterator)] = []
        for (i, target) in fleet.devices.prefix(3).enumerated() {
            let app = try AppUser(userId: "stop-user-\(i)", connection: broker.clientOptions(clientID: "stop-app-\(i)"))
            try await app.start()
            var events = await app.events().makeAsyncIterator()
            try await app.add(DeviceAddress(devId: target.devId))
            try await app.startCall(devId: target.devId, timeoutSeconds: 30)
            var answered = false
            while let e = await events.next() {
                if case .received(let m, _) = e, m.event == .answer {
                    answered = true
                    break
                }
                if case .callEnded = e { break }
            }
            #expect(answered, "\(target.devId) did not answer")
            apps.append((app, target.devId, events))
        }

        // One subscriber for the statuses and the called devices' out topics: its one connection
        // keeps the order in which each device published (PROTOCOL.md 3.3: hang_up before offline).
        let outs = apps.map { "smart/device/out/\($0.1)" }
        let watcher = try await MessageCollector.start(broker: broker, filters: ["smart/device/meta/+/online"] + outs)
        // The retained online statuses come first; count from here.
        _ = await watcher.waitForMessages(count: 60, timeout: .seconds(10))
        watcher.reset()

        let took = await fleet.stop()
        #expect(took < .seconds(10), "\(took)")

        // Every device's retained status, read by a fresh subscriber right after stop returned.
        let fresh = try await MessageCollector.start(broker: broker, filters: ["smart/device/meta/+/online"])
        let retained = await fresh.waitForMessages(count: 60, timeout: .seconds(10))
        let offline = Set(retained.filter { $0.payloadText.contains(#""online":false,"t":"#) }
            .map { String($0.topic.split(separator: "/")[3]) })
        #expect(offline == ids, "not offline by their own status: \(ids.subtracting(offline).sorted().prefix(5))")
        #expect(retained.count == 60)
        await fresh.stop()

        // Each device published one offline status; no will came after it.
        let sentinel = try MQTTClient(options: broker.clientOptions(clientID: "stop-sentinel"))
        defer { sentinel.close() }
        sentinel.connect()
        #expect(await sentinel.waitUntilConnected())
        try await sentinel.publishAndWaitForAck(topic: "smart/device/meta/sentinel/online", payload: Array("x".utf8))
        _ = await watcher.waitForMessages(count: 1, topic: "smart/device/meta/sentinel/online", timeout: .seconds(10))
        let seen = watcher.messages
        let statuses = seen.filter { $0.topic.hasSuffix("/online") && !$0.topic.contains("/sentinel/") }
        #expect(statuses.count == 60, "\(statuses.count) statuses")
        #expect(statuses.allSatisfy { $0.payloadText.contains(#""online":false,"t":"#) },
                "\(statuses.filter { !$0.payloadText.contains(#""t":"#) }.prefix(3))")
        for (_, devId, _) in apps {
            let hangUp = seen.firstIndex {
                $0.topic == "smart/device/out/\(devId)" && $0.payloadText.contains("hang_up")
                    && $0.payloadText.contains("shutdown")
            }
            let offline = seen.firstIndex {
                $0.topic == "smart/device/meta/\(devId)/online" && $0.payloadText.contains(#""online":false"#)
            }
            #expect(hangUp != nil && offline != nil, "\(devId): \(seen.filter { $0.topic.contains(devId) }.map(\.payloadText))")
            if let hangUp, let offline { #expect(hangUp < offline, "\(devId): hang_up before offline") }
        }
        await watcher.stop()

        // The calls: hang_up with reason shutdown, then ended.
        for (app, devId, iterator) in apps {
            var events = iterator
            var reason: String?
            while let e = await events.next() {
                if case .received(let m, _) = e, m.event == .hangUp { reason = m.reason }
                if case .callEnded = e { break }
            }
            #expect(reason == "shutdown", "\(devId)")
            await app.stop()
        }
    }
}
