import Foundation
import IPCWire
import TestSupport
import Testing

/// `ipcemu run --cloud tuya --control HOST:PORT` against the stand-in (issue 21 item 2): the control
/// API and console are up from the start; while pairing `GET /api/cloud` shows the token-pending
/// state, the pairing URL and its QR code as SVG; once the token is pushed, joined, with the
/// device in the normal device API.
@Suite("Cloud console (ipcemu run --cloud tuya --control against the stand-in)", .serialized, .timeLimit(.minutes(3)))
struct CloudConsoleTests {
    /// `GET /api/cloud` (openapi.yaml `CloudState`).
    struct CloudState: Decodable {
        var state: String
        var detail: String
        var uuid: String
        var productKey: String
        var iotdns: String
        var pairingURL: String?
        var qrSVG: String?
        var devId: String?
        var broker: String?
        var lastError: String?
    }

    static func cloud(_ client: ControlHTTPClient) async throws -> (status: Int, state: CloudState?) {
        let reply = try await client.request("GET", "/api/cloud")
        return (reply.status, try? JSONDecoder().decode(CloudState.self, from: Data(reply.body)))
    }

    /// Polls `GET /api/cloud` until its state is `state`; the last answer either way.
    static func waitForState(_ state: String, _ client: ControlHTTPClient, timeout: Duration = .seconds(30)) async throws -> CloudState? {
        let deadline = ContinuousClock.now + timeout
        var last: CloudState?
        while ContinuousClock.now < deadline {
            last = try await cloud(client).state
            if last?.state == state { return last }
            try await Task.sleep(for: .milliseconds(100))
        }
        return last
    }

    /// The first executable named `name` on PATH.
    static func onPath(_ name: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// A top-level field of a JSON answer.
    static func field(_ reply: ControlHTTPReply, _ key: String) -> JSONValue? {
        guard case .object(let object)? = reply.json else { return nil }
        return object[key]
    }

    /// The base URL the run printed ("Control API and console: http://127.0.0.1:PORT/").
    static func controlURL(_ process: IPCEmuProcess) async -> String? {
        guard await process.waitFor("Control API and console: ", timeout: .seconds(20)),
              let range = process.stdout.range(of: "Control API and console: ") else { return nil }
        let url = process.stdout[range.upperBound...].prefix { !$0.isWhitespace }
        return String(url.hasSuffix("/") ? url.dropLast() : url)
    }

    @Test("the console is up while pairing: token pending with the pairing URL and its QR code; after the token, joined and the device in the API; after an unbind, CONNACK 5 as the last error, the device gone and the QR code again")
    func pairingThenJoined() async throws {
        let uuid = CloudJoinTests.uuid()
        let standin = try await StandinProcess.start(licences: ["\(uuid),\(CloudJoinTests.authkey),\(CloudJoinTests.productKey)"])
        defer { standin.stop() }
        let device = try IPCEmuProcess([
            "run", "--profile", CloudJoinTests.doorbell, "--cloud", "tuya", "--uuid", uuid, "--authkey", CloudJoinTests.authkey,
            "--product-key", CloudJoinTests.productKey, "--state-dir", CloudJoinTests.stateDir(),
            "--iotdns", standin.ready.iotdns, "--cloud-ca", standin.ready.caFile, "--control", "127.0.0.1:0",
        ])
        let base = try #require(await Self.controlURL(device), "stdout: \(device.stdout)\nstderr: \(device.stderr)")
        let client = try ControlHTTPClient(baseURL: base)

        // Pairing: the state, the URL, the QR code; no device in the API yet.
        let pairing = try #require(try await Self.waitForState("tokenPending", client), "stderr: \(device.stderr)")
        #expect(pairing.state == "tokenPending", "\(pairing)")
        #expect(pairing.uuid == uuid && pairing.productKey == CloudJoinTests.productKey && pairing.iotdns == standin.ready.iotdns)
        #expect(pairing.pairingURL == "https://smartapp.tuya.com/s/p?p=\(CloudJoinTests.productKey)&uuid=\(uuid)&v=2.0")
        let svg = try #require(pairing.qrSVG)
        #expect(svg.hasPrefix("<svg ") && svg.hasSuffix("</svg>") && svg.contains(#"<path fill="black" d="M"#), "\(svg.prefix(200))")
        #expect(pairing.devId == nil && pairing.broker == nil)
        let devicesWhilePairing = try await client.request("GET", "/api/devices")
        #expect(devicesWhilePairing.status == 200 && Self.field(devicesWhilePairing, "total") == .int(0), "\(devicesWhilePairing.text)")
        let page = try await client.request("GET", "/")
        #expect(page.status == 200 && page.text.contains(#"id="cloud""#) && page.text.contains("/api/cloud"))
        // The console in headless Chromium draws the QR code (an image it decoded) with the URL beside it.
        if let chromium = Self.onPath("chromium"), let python = Self.onPath("python3") {
            var args = [packageRootPath + "/scripts/console-check.py", base + "/", "--cloud-qr", "--chromium", chromium]
            if let shot = ProcessInfo.processInfo.environment["IPCEMU_CLOUD_CONSOLE_SCREENSHOT"] { args += ["--screenshot", shot] }
            let run = try await runProgram(python, args)
            #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
            let seen = try JSONValue.parse(Array(run.stdout.utf8))
            guard case .object(let fields) = seen else { Issue.record("console-check.py: \(run.stdout)"); return }
            #expect(fields["state"] == .string("tokenPending") && fields["url"] == .string(pairing.pairingURL ?? ""), "\(run.stdout)")
            if case .int(let width)? = fields["qrWidth"] { #expect(width >= 6 * (21 + 8), "\(run.stdout)") } else { Issue.record("\(run.stdout)") }
        }

        // The app scans: the token comes, the device joins; the console shows the device.
        try await standin.bind(uuid: uuid)
        let joined = try #require(try await Self.waitForState("joined", client), "stderr: \(device.stderr)")
        #expect(joined.state == "joined", "\(joined)\nstderr: \(device.stderr)")
        #expect(joined.pairingURL == nil && joined.qrSVG == nil)
        let devId = try #require(joined.devId)
        #expect(joined.broker == standin.ready.mqtt, "\(joined)")
        // The device is registered at the join; it is online once its status is published.
        let deadline = ContinuousClock.now + .seconds(20)
        var state = try await client.request("GET", "/api/devices/\(devId)")
        while Self.field(state, "connected") != .bool(true), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            state = try await client.request("GET", "/api/devices/\(devId)")
        }
        #expect(state.status == 200 && Self.field(state, "connected") == .bool(true), "\(state.status) \(state.text)")

        // Removed from its home: CONNACK 5 is the last error, the device leaves the API, and the
        // console shows the QR code again.
        try await standin.unbind(uuid: uuid)
        let again = try #require(try await Self.waitForState("tokenPending", client), "stderr: \(device.stderr)")
        #expect(again.state == "tokenPending" && again.pairingURL == pairing.pairingURL && again.qrSVG == pairing.qrSVG, "\(again)")
        #expect(again.lastError?.contains("CONNACK 5") == true, "\(again)")
        let devicesAfter = try await client.request("GET", "/api/devices")
        #expect(Self.field(devicesAfter, "total") == .int(0), "\(devicesAfter.text)")
        #expect(try await client.request("GET", "/api/devices/\(devId)").status == 404)

        device.signal(SIGTERM)
        #expect(await device.waitForExit(timeout: .seconds(15)) == 0, "stderr: \(device.stderr)")
    }

    @Test("without --cloud, GET /api/cloud is 404")
    func notOnACloud() async throws {
        let device = try IPCEmuProcess(["run", "--profile", CloudJoinTests.doorbell, "--control", "127.0.0.1:0"])
        let base = try #require(await Self.controlURL(device), "stdout: \(device.stdout)\nstderr: \(device.stderr)")
        let reply = try await ControlHTTPClient(baseURL: base).request("GET", "/api/cloud")
        #expect(reply.status == 404 && reply.text.contains("not on a cloud"), "\(reply.status) \(reply.text)")
        device.signal(SIGTERM)
        #expect(await device.waitForExit(timeout: .seconds(15)) == 0)
    }
}
