import ArgumentParser
import CallRuntime
import CloudLink
import ControlAPI
import Foundation
import Synchronization
import TuyaCloud

/// What the web console and `GET /api/cloud` show of `ipcemu run --cloud tuya` (issue 21): kept
/// from the runner's events (the pairing URL and its QR code, the last error, the device once
/// joined), with the join machine's phase read when asked.
final class CloudConsoleRecord: Sendable {
    private struct Seen {
        var pairingURL: String?
        var qrSVG: String?
        var devId: String?
        var broker: String?
        var joined = false
        var lastError: String?
        var lastErrorAt: Int64?
    }

    let uuid: String
    let productKey: String
    let iotdns: String
    private let seen = Mutex(Seen())

    init(uuid: String, productKey: String, iotdns: String) {
        self.uuid = uuid
        self.productKey = productKey
        self.iotdns = iotdns
    }

    /// Keeps what the console shows of one runner event.
    func note(_ event: CloudRunnerEvent) {
        seen.withLock { s in
            switch event {
            case .pairing(let url):
                s.pairingURL = url
                // The same libqrencode matrix as the terminal's drawing.
                s.qrSVG = QRCodeSVG.svg(for: url)
            case .pairingDone:
                s.pairingURL = nil
                s.qrSVG = nil
            case .joined(let identity, _, _):
                s.devId = identity.devId
                s.broker = "\(identity.mqttHost):\(identity.mqttPort)"
                s.joined = true
            case .left:
                s.joined = false
            case .log(let level, let text):
                if level == .warning || level == .error {
                    s.lastError = text
                    s.lastErrorAt = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
                }
            }
        }
    }

    /// The state for `phase` (the runner's, read now).
    func status(phase: CloudJoinPhase) -> CloudConsoleStatus {
        let s = seen.withLock { $0 }
        let (state, detail) = Self.describe(phase, uuid: uuid)
        var status = CloudConsoleStatus(state: state, detail: detail, uuid: uuid, productKey: productKey, iotdns: iotdns)
        status.pairingURL = s.pairingURL
        status.qrSVG = s.qrSVG
        status.devId = s.devId
        status.broker = s.joined ? s.broker : nil
        status.lastError = s.lastError
        status.lastErrorAt = s.lastErrorAt
        return status
    }

    static func describe(_ phase: CloudJoinPhase, uuid: String) -> (CloudConsoleStatus.State, String) {
        switch phase {
        case .idle:
            return (.idle, "not started, or unpaired")
        case .resolvingEndpoints(let purpose, _):
            let why = switch purpose {
            case .pairing: "before pairing"
            case .afterToken: "with the token's region"
            case .resume: "with the stored region"
            }
            return (.endpoints, "asking iotdns for the endpoints " + why)
        case .directLink(.connecting):
            return (.directLink, "connecting the direct link as acon_\(uuid)")
        case .directLink(.waitingForToken):
            return (.tokenPending, "waiting for the app's scan: the token comes on d/ai/\(uuid)")
        case .activating:
            return (.activating, "activating with the token (tuya.device.active)")
        case .updatingVersions:
            return (.versions, "uploading the versions (tuya.device.versions.update)")
        case .uploadingSkill:
            return (.versions, "uploading the skill (tuya.device.skill.update)")
        case .deviceLink(.connecting):
            return (.connecting, "connecting the device link")
        case .deviceLink(.connected):
            return (.joined, "the device runs on the cloud's broker")
        case .unbound:
            return (.unbound, "removed from its home (CONNACK 5): asking tuya.device.info.sync, then pairing again")
        case .backoff(let retryAt, let step):
            let what = switch step {
            case .resolve: "asking iotdns"
            case .directLink: "the direct link"
            case .activate: "the activation"
            case .deviceLink: "the device link"
            }
            let now = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
            let seconds = Double(max(0, retryAt &- now)) / 1000
            return (.backoff, String(format: "retrying %@ in %.1f s", what, seconds))
        }
    }
}

/// The control API and console of `ipcemu run --cloud` (with `--control`), and the journal (with
/// `--journal`): up before the join starts, so the console shows the pairing QR code; the device
/// is registered at each join and unregistered when its link goes down.
struct CloudControl {
    let registry: DeviceRegistry
    let server: ControlServer?

    /// Nil when neither --control nor --journal is given.
    static func start(_ options: ControlOptions, record: CloudConsoleRecord, runner: CloudJoinRunner,
                      log: EventLog) async throws -> CloudControl? {
        guard options.control != nil || options.journal != nil else { return nil }
        let registry = DeviceRegistry(journalDirectory: options.journal)
        await registry.setCloud { [record, runner] in record.status(phase: await runner.phase) }
        guard let address = options.control else { return CloudControl(registry: registry, server: nil) }
        do {
            // No console phone: the cloud's broker takes no app user of ours.
            let server = try ControlServer(configuration: ControlServerConfiguration(address: address, token: options.controlToken),
                                           registry: registry, phone: nil, log: log)
            try await server.start()
            say("  Control API and console: \(server.url)/   (pairing QR code and join state: \(server.url)/api/cloud)")
            return CloudControl(registry: registry, server: server)
        } catch {
            throw ValidationError("--control: \(error.message)")
        }
    }

    func stop() async {
        await server?.stop()
        await registry.close()
    }
}
