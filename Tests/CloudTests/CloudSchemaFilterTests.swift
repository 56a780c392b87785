import Foundation
import TestSupport
import Testing

/// Issue 21 item 3, end to end: the product schema the stand-in's activation answer carries lacks
/// one of the profile's DPs (150, record_switch). The device never sends it on the stand-in's broker
/// (the stand-in opens every report with the localKey and keeps what it saw), and says so once in
/// its log, however many reports follow.
@Suite("Cloud DP reports follow the product schema (ipcemu run --cloud tuya against the stand-in)", .serialized,
       .timeLimit(.minutes(3)))
struct CloudSchemaFilterTests {
    static let acDoorbell = packageRootPath + "/device-profiles/ac-doorbell.yaml"
    static let missing = "150"
    static let warning = "DP 150 is in the profile but not in the product's schema on the cloud: never reported"

    /// The stand-in's record of `devId`: reportedDps (keys) and dpsNotInSchema.
    static func reported(_ standin: StandinProcess, devId: String) async throws -> (dps: Set<String>, notInSchema: [String]) {
        guard case .array(let devices)? = try await standin.state()["devices"] else { return ([], []) }
        for case .object(let device) in devices where device["devId"] == .string(devId) {
            var dps = Set<String>()
            if case .object(let values)? = device["reportedDps"] { dps = Set(values.keys) }
            var unknown: [String] = []
            if case .array(let ids)? = device["dpsNotInSchema"] {
                for case .string(let id) in ids { unknown.append(id) }
            }
            return (dps, unknown)
        }
        return ([], [])
    }

    @Test("a profile DP the schema lacks is never reported on the cloud's broker, and warned about once across two reports")
    func schemaWithoutOneDataPoint() async throws {
        let uuid = CloudJoinTests.uuid()
        let schema = [115, 134, 136, 145, 146, 147, 149, 151, 154, 185, 212].map(String.init).joined(separator: ",")
        let standin = try await StandinProcess.start(licences: ["\(uuid),\(CloudJoinTests.authkey),\(CloudJoinTests.productKey)"],
                                         extraArguments: ["--schema-dps", schema])
        defer { standin.stop() }
        let device = try IPCEmuProcess([
            "run", "--profile", Self.acDoorbell, "--cloud", "tuya", "--uuid", uuid, "--authkey", CloudJoinTests.authkey,
            "--product-key", CloudJoinTests.productKey, "--state-dir", CloudJoinTests.stateDir(),
            "--iotdns", standin.ready.iotdns, "--cloud-ca", standin.ready.caFile, "--log-level", "debug",
        ])
        #expect(await device.waitFor("direct link up as acon_\(uuid)", inStderr: true, timeout: .seconds(30)),
                "stderr: \(device.stderr)")
        try await standin.bind(uuid: uuid)
        #expect(await device.waitFor("the device is online on the cloud", inStderr: true, timeout: .seconds(30)),
                "stderr: \(device.stderr)\nstand-in: \(standin.log)")
        let devId = try #require(CloudJoinTests.devId(in: device.stderr), "stderr: \(device.stderr)")
        #expect(device.stderr.contains("schemaDPs=11") || device.stderr.contains("\"schemaDPs\":\"11\""),
                "the device did not take the 11-DP schema: \(device.stderr)")

        // The connect report (PROTOCOL.md 8.3) reaches the stand-in: every schema DP, not 150.
        let reportLine = "DP report of \(devId):"
        let deadline = ContinuousClock.now + .seconds(20)
        while !standin.log.contains(reportLine), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        var seen = try await Self.reported(standin, devId: devId)
        #expect(seen.dps.contains("134") && seen.dps.contains("149"), "connect report: \(seen.dps)\nstand-in: \(standin.log)")
        #expect(!seen.dps.contains(Self.missing), "DP 150 reached the cloud: \(seen.dps)")
        #expect(seen.notInSchema.isEmpty, "the stand-in saw DPs its schema lacks: \(seen.notInSchema)")

        // A second report of every DP: the app asks for all of them (protocol 31) over the cloud link.
        let localKey = try #require(try await standin.localKey(devId: devId))
        let appProfile = NSTemporaryDirectory() + "cloud-schema-app-\(devId).yaml"
        try """
            identity:
              devId: \(devId)
              localKey: "\(localKey)"
              p2pPassword: "acdoor-p2p-secret"
              category: sp
            security: pv2.2

            """.write(toFile: appProfile, atomically: true, encoding: .utf8)
        let query = try await CLIRun.ipcemu([
            "app", "dps", devId, "--query", "--broker", standin.appBrokerURL, "--ca-file", standin.ready.caFile,
            "--profile", appProfile, "--user", "schema-checker",
        ])
        #expect(query.status == 0, "app dps: \(query.stdout) \(query.stderr)")
        #expect(query.stdout.contains(#""134""#) && !query.stdout.contains(#""150""#), "app dps: \(query.stdout)")
        // The stand-in got that report too (the moment passed): still no 150, and one warning in all.
        let reports = { standin.log.components(separatedBy: reportLine).count - 1 }
        let until = ContinuousClock.now + .seconds(20)
        while reports() < 2, ContinuousClock.now < until { try await Task.sleep(for: .milliseconds(50)) }
        #expect(reports() >= 2, "stand-in: \(standin.log)")
        seen = try await Self.reported(standin, devId: devId)
        #expect(!seen.dps.contains(Self.missing) && seen.notInSchema.isEmpty, "after the query: \(seen)")
        #expect(device.stderr.components(separatedBy: Self.warning).count - 1 == 1, "stderr: \(device.stderr)")

        device.signal(SIGTERM)
        #expect(await device.waitForExit(timeout: .seconds(15)) == 0)
    }
}
