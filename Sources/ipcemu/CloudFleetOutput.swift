import CallRuntime
import CloudLink
import DeviceProfile
import Emulator
import Foundation
import TuyaCloud

/// The devices of a cloud fleet: one made at each member's `.joined`, stopped at `.left` and at
/// shutdown (as `CloudDeviceSession` does for `run`, without the terminal QR code: the pairing URL
/// is printed per device).
actor CloudFleetDevices {
    let profiles: [DeviceProfile]
    let members: [CloudFleet.Member]
    let productKey: String
    let log: EventLog
    let output: FleetOutput
    private var devices: [Int: Device] = [:]
    private var stopped = false

    init(profiles: [DeviceProfile], members: [CloudFleet.Member], productKey: String, log: EventLog, output: FleetOutput) {
        self.profiles = profiles
        self.members = members
        self.productKey = productKey
        self.log = log
        self.output = output
    }

    func handle(_ event: CloudRunnerEvent, of index: Int) async {
        guard profiles.indices.contains(index), members.indices.contains(index) else { return }
        let uuid = members[index].licence.uuid
        switch event {
        case .pairing(let url):
            output.cloudPairing(uuid: uuid, url: url)
        case .pairingDone:
            log.log(.info, "cloud: paired", fields: [("uuid", uuid)])
        case .joined(let identity, let link, _):
            guard !stopped else { return }
            await devices.removeValue(forKey: index)?.stop()
            let profile = profiles[index].onCloud(identity, productKey: productKey)
            do {
                let schema = identity.dataPoints.isEmpty ? nil : Set(identity.dataPoints.map(\.id))
                let device = try Device(profile: profile, transport: link, log: log,
                                        cloud: DeviceCloudOptions(schemaDataPoints: schema))
                try await device.start()
                devices[index] = device
                log.log(.info, "cloud: the device is online on the cloud", fields: [
                    ("uuid", uuid), ("devId", identity.devId), ("broker", "\(identity.mqttHost):\(identity.mqttPort)"),
                ])
            } catch {
                log.log(.error, "cloud: cannot run the device on the cloud link: \(error)", fields: [("uuid", uuid)])
            }
        case .left(let why):
            log.log(.warning, "cloud: device link down: \(why)", fields: [("uuid", uuid)])
            await devices.removeValue(forKey: index)?.stop()
        case .log(let level, let text):
            let level = LogLevel(rawValue: level.rawValue) ?? .info
            log.log(level, "cloud: " + text, fields: [("uuid", uuid)])
            if level == .error { output.cloudRefused(uuid: uuid, why: text) }
        }
    }

    /// Stops every device (each publishes its offline status); how many there were.
    func stop() async -> Int {
        stopped = true
        let running = devices
        devices.removeAll()
        await withTaskGroup(of: Void.self) { group in
            for (_, device) in running { group.addTask { await device.stop() } }
        }
        return running.count
    }
}

extension FleetOutput {
    /// One cloud fleet line: its JSON with --json, else `human`.
    private func cloud(_ line: CloudFleetLine, human: @autoclosure () -> String) {
        say(json ? line.jsonText : human())
    }

    func cloudProgress(_ c: CloudFleetCounts, elapsed: Duration) {
        cloud(.cloud(c, seconds: Self.seconds(elapsed)),
              human: "fleet: \(c.joined)/\(c.total) joined, \(c.paired) paired, \(c.waitingForToken) waiting for a token, \(c.refused) refused, \(c.joining) joining (\(format(elapsed)) s)")
    }

    func cloudOnline(_ c: CloudFleetCounts, elapsed: Duration, perSecond: Double) {
        cloud(.online(online: c.joined, planned: c.total, seconds: Self.seconds(elapsed), activationsPerSecond: perSecond),
              human: "fleet: \(c.joined) of \(c.total) devices online on the cloud in \(format(elapsed)) s")
    }

    /// A paced join request let through: a JSON line with --json (the pacing as measured), else a debug log line.
    func cloudPaced(uuid: String, request: String, seconds: Double, log: EventLog) {
        if json {
            say(CloudFleetLine.paced(uuid: uuid, request: request, seconds: seconds).jsonText)
        } else {
            log.log(.debug, "cloud: \(request) request let through at \(String(format: "%.3f", seconds)) s", fields: [("uuid", uuid)])
        }
    }

    func cloudPairing(uuid: String, url: String) {
        cloud(.pairing(uuid: uuid, url: url), human: "fleet: \(uuid) waiting for a token: pair it with \(url)")
    }

    func cloudRefused(uuid: String, why: String) {
        cloud(.refused(uuid: uuid, reason: why), human: "fleet: \(uuid) refused: \(why)")
    }

    func cloudSummary(_ c: CloudFleetCounts, admitted: Int) {
        cloud(.summary(c, pacedRequests: admitted),
              human: "fleet: summary: \(c.total) licences, \(c.joined) joined, \(c.paired) paired, \(c.waitingForToken) waiting for a token, \(c.refused) refused, \(c.joining) joining; \(admitted) paced join requests")
    }

    /// Every device offline (a cloud fleet's `stopped` line).
    func cloudStopped(devices: Int, took: Duration) {
        cloud(.stopped(devices: devices, seconds: Self.seconds(took)), human: "fleet: \(devices) devices offline in \(format(took)) s")
    }

    /// A note (a cloud fleet's `note` line).
    func cloudNote(_ text: String) {
        cloud(.note(message: text), human: "fleet: \(text)")
    }
}
