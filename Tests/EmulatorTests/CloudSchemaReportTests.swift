import CallEngine
import Emulator
import IPCEmuTesting
import IPCWire
import MQTTTransport
import Testing
import TestSupport

/// Issue 21: on the cloud, DP reports are matched to the product schema activation returned: a
/// profile DP the schema lacks is never sent (and warned about once).
@Suite("DP reports on the cloud follow the product's schema")
struct CloudSchemaReportTests {
    @Test("the connect report and a press's report carry only the schema's DPs")
    func onlySchemaDataPoints() async throws {
        let bus = InProcessBus()
        let profile = DeviceProfile.testTuyaDoorbell(kind: .acDoorbell)
        let options = Device.clientOptions(profile: profile, connection: MQTTClientOptions(clientID: ""))
        let schema: Set<DPId> = [134, 136, 149]
        let device = try Device(profile: profile, transport: bus.transport(options: options),
                                cloud: DeviceCloudOptions(schemaDataPoints: schema))
        let events = await device.events()
        try await device.start()
        #expect(await device.waitUntilConnected(timeout: .seconds(30)))
        #expect(profile.dataPoints.ids.count > schema.count, "the profile must have DPs the schema lacks")

        let reports = Reports(events)
        let connect = try #require(await reports.next(), "no report on connect")
        #expect(connect.map(\.id) == [134, 136, 149])

        _ = try await device.press()
        // The press's report: DP 136 only (154 and 185, the snapshot's, are not in the schema).
        let press = try #require(await reports.next(), "no report after the press")
        #expect(press.map(\.id) == [136])
        await device.stop()
    }
}

/// The device's DP reports, one at a time.
private final class Reports: Sendable {
    let stream: AsyncStream<[DPEntry]>

    init(_ events: AsyncStream<DeviceEvent>) {
        stream = AsyncStream { continuation in
            Task {
                for await e in events { if case .dataPointsReported(let dps) = e { continuation.yield(dps) } }
                continuation.finish()
            }
        }
    }

    func next() async -> [DPEntry]? {
        await withTaskGroup(of: [DPEntry]?.self) { group in
            group.addTask { [stream] in
                for await r in stream { return r }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(5))
                return nil
            }
            let result = await group.next() ?? nil
            group.cancelAll()
            return result
        }
    }
}
