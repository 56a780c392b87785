import CloudLink
import TuyaCloud
import Foundation
import MQTTTransport
import TestSupport
import Testing

/// `ipcemu run --cloud tuya` against the local stand-in (scripts/tuya-cloud-standin.py), end to end
/// through real TLS (PROTOCOL.md 9, issue 21): pairing with the token pushed on the direct link,
/// activation, the device link, a restart that rejoins without pairing, and CONNACK 5 unpairing it.
/// Each refusal the stand-in can be made to give has its test, asserting the device's log line.
@Suite("Cloud join (ipcemu run --cloud tuya against the stand-in)", .serialized, .timeLimit(.minutes(3)))
struct CloudJoinTests {
    static let doorbell = packageRootPath + "/device-profiles/doorbell.yaml"
    static let authkey = "Kq7Wm2Xp9Ld4Rt6Yb1Hn3Vc8Zf5Gs0Ja"
    static let productKey = "pkipcemutest01"

    /// A uuid of its own per test: stand-ins and state folders never meet.
    static func uuid() -> String { "ipcemutest" + String(UInt32.random(in: 0...UInt32.max), radix: 36) }

    static func stateDir() -> String {
        let path = NSTemporaryDirectory() + "cloud-state-" + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func run(_ standin: StandinProcess, uuid: String, authkey: String = authkey, productKey: String = productKey,
                    stateDir: String, ca: String? = nil) throws -> IPCEmuProcess {
        try IPCEmuProcess([
            "run", "--profile", doorbell, "--cloud", "tuya", "--uuid", uuid, "--authkey", authkey,
            "--product-key", productKey, "--state-dir", stateDir, "--iotdns", standin.ready.iotdns,
            "--cloud-ca", ca ?? standin.ready.caFile, "--log-level", "debug",
        ])
    }

    /// The app's view of the device's retained online status (smart/device/meta/<devId>/online).
    final class OnlineWatcher: @unchecked Sendable {
        let client: MQTTClient
        private let lock = NSLock()
        private var seen: [String] = []

        init(_ standin: StandinProcess, devId: String) async throws {
            client = try MQTTClient(options: MQTTClientOptions(
                clientID: "app-\(UInt32.random(in: 0...UInt32.max))", host: "127.0.0.1", port: standin.mqttPort,
                username: standin.ready.app.username, password: standin.ready.app.password,
                tls: MQTTTLSOptions(caFile: standin.ready.caFile)))
            client.setMessageHandler { [weak self] message in
                guard let self else { return }
                self.lock.lock(); self.seen.append(message.payloadText); self.lock.unlock()
            }
            try client.subscribe("smart/device/meta/\(devId)/online")
            client.connect()
            _ = await client.waitUntilConnected(timeout: .seconds(10))
        }

        var payloads: [String] { lock.lock(); defer { lock.unlock() }; return seen }

        /// Waits for a payload (after the first `after` seen) that contains `text`.
        func waitFor(_ text: String, after: Int = 0, timeout: Duration = .seconds(20)) async -> Bool {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if payloads.dropFirst(after).contains(where: { $0.contains(text) }) { return true }
                try? await Task.sleep(for: .milliseconds(50))
            }
            return false
        }
    }

    static func devId(in log: String) -> String? {
        guard let range = log.range(of: "activated as devId ") else { return nil }
        return String(log[range.upperBound...].prefix { !$0.isWhitespace })
    }

    @Test("pair (token pushed) -> activate -> online on the TLS broker -> an app probes and calls it over the cloud link -> restart rejoins without a token -> unbind: CONNACK 5 erases the state and pairing starts again")
    func pairRestartUnbind() async throws {
        let uuid = Self.uuid()
        let standin = try await StandinProcess.start(licences: ["\(uuid),\(Self.authkey),\(Self.productKey)"])
        defer { standin.stop() }
        let stateDir = Self.stateDir()
        let stateFile = CloudStateStore(directory: stateDir, uuid: uuid).path

        // First run: the QR code, then the token the app's scan causes.
        var device = try Self.run(standin, uuid: uuid, stateDir: stateDir)
        #expect(await device.waitFor("https://smartapp.tuya.com/s/p?p=\(Self.productKey)&uuid=\(uuid)&v=2.0", timeout: .seconds(30)))
        #expect(await device.waitFor("direct link up as acon_\(uuid)", inStderr: true, timeout: .seconds(30)))
        try await standin.bind(uuid: uuid)
        #expect(await device.waitFor("the device is online on the cloud", inStderr: true, timeout: .seconds(30)),
                "stderr: \(device.stderr)\nstand-in: \(standin.log)")
        let devId = try #require(Self.devId(in: device.stderr), "stderr: \(device.stderr)")
        #expect(standin.log.contains("activated uuid \(uuid) as devId \(devId)"))
        #expect(standin.log.contains("versions of \(devId)"))
        #expect(FileManager.default.fileExists(atPath: stateFile))
        let mode = (try FileManager.default.attributesOfItem(atPath: stateFile)[.posixPermissions] as? Int) ?? 0
        #expect(mode & 0o077 == 0, "the state file is readable by others: \(String(mode, radix: 8))")

        // The app sees it online on the stand-in's broker.
        let app = try await OnlineWatcher(standin, devId: devId)
        #expect(await app.waitFor(#""online":true"#), "seen: \(app.payloads)")

        // Sections 3-8 over the cloud link: the app simulator, with the localKey the cloud gives the
        // app, probes the device and calls it (pv2.2 both ways, through the TLS broker's ACLs).
        let localKey = try #require(try await standin.localKey(devId: devId))
        let appProfile = NSTemporaryDirectory() + "cloud-app-\(devId).yaml"
        try """
            identity:
              devId: \(devId)
              localKey: "\(localKey)"
              p2pPassword: "doorbell-p2p-secret"
              category: sp_dpsxj
            security: pv2.2

            """.write(toFile: appProfile, atomically: true, encoding: .utf8)
        let appArguments = ["--broker", standin.appBrokerURL, "--ca-file", standin.ready.caFile, "--profile", appProfile]
        let probe = try await CLIRun.ipcemu(["app", "probe", devId] + appArguments)
        #expect(probe.status == 0, "probe: \(probe.stdout) \(probe.stderr)")
        #expect(probe.stdout.contains(#""devId":"\#(devId)""#) && probe.stdout.contains(#""support":true"#))
        // Another user than the probe's: each app user keeps its own pv2.2 seq (PROTOCOL.md 2.1), and
        // a second process of the same user within the same second would start below the first's.
        let call = try await CLIRun.ipcemu(["app", "call", devId, "--hangup-after", "0.5", "--user", "cloud-caller"] + appArguments)
        #expect(call.status == 0, "call: \(call.stdout) \(call.stderr)")
        #expect(call.stdout.contains("<- answer from=\(devId)"), "call: \(call.stdout)")
        // The stand-in opened what the device published as pv2.2 under its localKey, and refused none.
        #expect(try await standin.checkedOutMessages(devId: devId) >= 3)
        #expect(!standin.log.contains("PAYLOAD_NOT_PV22") && !standin.log.contains("not pv2.2 under its localKey"))

        // Restart: it rejoins from its state, with no QR code and no token.
        device.signal(SIGTERM)
        #expect(await device.waitForExit(timeout: .seconds(15)) == 0)
        #expect(await app.waitFor(#""online":false"#), "seen: \(app.payloads)")
        let binds = standin.log.components(separatedBy: "bind: token").count - 1
        let seenBefore = app.payloads.count
        device = try Self.run(standin, uuid: uuid, stateDir: stateDir)
        #expect(await device.waitFor("the device is online on the cloud", inStderr: true, timeout: .seconds(30)),
                "stderr: \(device.stderr)")
        #expect(await app.waitFor(#""online":true"#, after: seenBefore), "seen: \(app.payloads)")
        #expect(!device.stdout.contains("smartapp.tuya.com"), "a restart showed the QR code again")
        #expect(standin.log.components(separatedBy: "bind: token").count - 1 == binds)
        #expect(Self.devId(in: device.stderr) == nil, "a restart activated again")

        // Unbind: the broker drops it and refuses it (CONNACK 5); it erases its state and pairs again.
        try await standin.unbind(uuid: uuid)
        #expect(await device.waitFor("CONNACK 5", inStderr: true, timeout: .seconds(30)), "stderr: \(device.stderr)")
        #expect(await device.waitFor("smartapp.tuya.com/s/p?p=\(Self.productKey)&uuid=\(uuid)", timeout: .seconds(30)),
                "stdout: \(device.stdout)")
        #expect(await device.waitFor("direct link up as acon_\(uuid)", inStderr: true, timeout: .seconds(30)))
        let status = try await CLIRun.ipcemu(["cloud", "status", "--state-dir", stateDir])
        #expect(status.status == 1, "status: \(status.stdout)")
        #expect(!status.stdout.contains("secKey") && !status.stdout.contains("localKey"))
        device.signal(SIGTERM)
        #expect(await device.waitForExit(timeout: .seconds(15)) == 0)
        app.client.close()
    }

    @Test("an authkey that is not the licence's: the API refuses the sign, and the device says so")
    func wrongAuthkeyIsABadSign() async throws {
        let uuid = Self.uuid()
        let deviceKey = "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp"
        // The broker and the token push use the device's key, so it gets as far as activation.
        let standin = try await StandinProcess.start(licences: ["\(uuid),\(Self.authkey),\(Self.productKey),\(deviceKey)"])
        defer { standin.stop() }
        let device = try Self.run(standin, uuid: uuid, authkey: deviceKey, stateDir: Self.stateDir())
        #expect(await device.waitFor("direct link up as acon_\(uuid)", inStderr: true, timeout: .seconds(30)))
        try await standin.bind(uuid: uuid)
        #expect(await device.waitFor("SING_VALIDATE_FALED", inStderr: true, timeout: .seconds(30)), "stderr: \(device.stderr)")
        #expect(device.stderr.contains("the authkey does not match this uuid"))
        #expect(standin.log.contains("the sign does not match the authkey of \(uuid)"))
        #expect(!device.stderr.contains("the device is online on the cloud"))
        device.signal(SIGTERM)
        #expect(await device.waitForExit(timeout: .seconds(15)) == 0)
    }

    @Test("a token in the wrong encryption is named and ignored; an expired one is refused and pairing starts again; then a good one joins")
    func badTokens() async throws {
        let uuid = Self.uuid()
        let standin = try await StandinProcess.start(licences: ["\(uuid),\(Self.authkey),\(Self.productKey)"])
        defer { standin.stop() }
        let stateDir = Self.stateDir()
        let device = try Self.run(standin, uuid: uuid, stateDir: stateDir)
        #expect(await device.waitFor("direct link up as acon_\(uuid)", inStderr: true, timeout: .seconds(30)))
        try await standin.bind(uuid: uuid, seal: "wrongKey")
        #expect(await device.waitFor("a pairing token arrived in the wrong encryption", inStderr: true, timeout: .seconds(30)),
                "stderr: \(device.stderr)")
        // Counted before the expired token: pairing again brings the direct link up once more.
        let directLinks = device.stderr.components(separatedBy: "direct link up as acon_").count - 1
        try await standin.bind(uuid: uuid, ttl: 0)
        #expect(await device.waitFor("TOKEN_EXPIRED", inStderr: true, timeout: .seconds(30)), "stderr: \(device.stderr)")
        #expect(device.stderr.contains("the pairing token is expired or already used"))
        #expect(standin.log.contains("refused tuya.device.active: TOKEN_EXPIRED"))
        // Pairing again: the direct link is up again, and a good token joins.
        let deadline = ContinuousClock.now + .seconds(30)
        while device.stderr.components(separatedBy: "direct link up as acon_").count - 1 <= directLinks, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(device.stderr.components(separatedBy: "direct link up as acon_").count - 1 > directLinks)
        try await standin.bind(uuid: uuid)
        #expect(await device.waitFor("the device is online on the cloud", inStderr: true, timeout: .seconds(30)),
                "stderr: \(device.stderr)")
        device.signal(SIGTERM)
        #expect(await device.waitForExit(timeout: .seconds(15)) == 0)

        // ipcemu cloud status shows the activation without its secrets; unpair erases it.
        let devId = try #require(Self.devId(in: device.stderr))
        let status = try await CLIRun.ipcemu(["cloud", "status", "--state-dir", stateDir])
        #expect(status.status == 0, "status: \(status.stdout) \(status.stderr)")
        #expect(status.stdout.contains(devId) && status.stdout.contains("region") && status.stdout.contains("EU"))
        let store = CloudStateStore(directory: stateDir, uuid: uuid)
        let state = try #require(store.load().state?.activation)
        #expect(!status.stdout.contains(state.secKey) && !status.stdout.contains(state.localKey))
        let unpair = try await CLIRun.ipcemu(["cloud", "unpair", "--state-dir", stateDir])
        #expect(unpair.status == 0 && unpair.stdout.contains("erased"), "unpair: \(unpair.stdout) \(unpair.stderr)")
        #expect(!FileManager.default.fileExists(atPath: store.path))
        let after = try await CLIRun.ipcemu(["cloud", "status", "--state-dir", stateDir])
        #expect(after.status == 1)
    }

    @Test("a product key that is not the licence's product: the API refuses it, and the device says what to check")
    func wrongProductKey() async throws {
        let uuid = Self.uuid()
        let standin = try await StandinProcess.start(licences: ["\(uuid),\(Self.authkey),\(Self.productKey)"])
        defer { standin.stop() }
        let device = try Self.run(standin, uuid: uuid, productKey: "pkotherproduct", stateDir: Self.stateDir())
        #expect(await device.waitFor("direct link up as acon_\(uuid)", inStderr: true, timeout: .seconds(30)))
        try await standin.bind(uuid: uuid)
        #expect(await device.waitFor("PRODUCT_NOT_EXIST", inStderr: true, timeout: .seconds(30)), "stderr: \(device.stderr)")
        #expect(device.stderr.contains("the cloud does not know this product id"))
        #expect(standin.log.contains("productKey 'pkotherproduct' is not the product of uuid \(uuid)"))
        device.signal(SIGTERM)
        #expect(await device.waitForExit(timeout: .seconds(15)) == 0)
    }

    @Test("a device clock 10 minutes off the cloud's: the API refuses the time, and the device says so and retries")
    func clockOutsideTheWindow() async throws {
        let uuid = Self.uuid()
        let standin = try await StandinProcess.start(licences: ["\(uuid),\(Self.authkey),\(Self.productKey)"],
                                         extraArguments: ["--clock-offset", "600"])
        defer { standin.stop() }
        let device = try Self.run(standin, uuid: uuid, stateDir: Self.stateDir())
        #expect(await device.waitFor("direct link up as acon_\(uuid)", inStderr: true, timeout: .seconds(30)))
        try await standin.bind(uuid: uuid)
        #expect(await device.waitFor("TIME_INVALID", inStderr: true, timeout: .seconds(30)), "stderr: \(device.stderr)")
        #expect(device.stderr.contains("from the cloud's clock"), "the cloud's reason reaches the log line")
        #expect(standin.log.contains("refused tuya.device.active: TIME_INVALID"))
        #expect(!device.stderr.contains("the device is online on the cloud"))
        device.signal(SIGTERM)
        #expect(await device.waitForExit(timeout: .seconds(15)) == 0)
    }

    @Test("a CA that did not sign the stand-in's certificate: a TLS failure, said as such, and retried")
    func wrongCAIsATLSFailure() async throws {
        let uuid = Self.uuid()
        let standin = try await StandinProcess.start(licences: ["\(uuid),\(Self.authkey),\(Self.productKey)"])
        defer { standin.stop() }
        let device = try Self.run(standin, uuid: uuid, stateDir: Self.stateDir(), ca: standin.ready.wrongCaFile)
        #expect(await device.waitFor("TLS failure at \(standin.ready.iotdns)", inStderr: true, timeout: .seconds(30)),
                "stderr: \(device.stderr)")
        #expect(device.stderr.contains("CERTIFICATE_VERIFY_FAILED"))
        // Retried with backoff: a second attempt fails the same way (1 s later).
        let deadlineRetry = ContinuousClock.now + .seconds(10)
        while device.stderr.components(separatedBy: "TLS failure at").count < 3, ContinuousClock.now < deadlineRetry {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(device.stderr.components(separatedBy: "TLS failure at").count >= 3, "stderr: \(device.stderr)")
        // The stand-in saw the handshake fail (the moment passed), and nothing reached its API.
        let deadline = ContinuousClock.now + .seconds(10)
        while !standin.log.contains("TLS or socket error"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(standin.log.contains("TLS or socket error"))
        #expect(!standin.log.contains("iotdns: endpoints"))
        device.signal(SIGTERM)
        #expect(await device.waitForExit(timeout: .seconds(15)) == 0)
    }
}
