import Foundation
import IPCWire
import TestSupport

/// scripts/tuya-cloud-standin.py as a child process: started, its ready line read, driven through
/// its control endpoint, stopped with SIGTERM.
final class StandinProcess: @unchecked Sendable {
    struct Ready: Decodable {
        struct Account: Decodable { var username: String; var password: String }
        var dir: String
        var caFile: String
        var wrongCaFile: String
        var iotdns: String
        var mqtt: String
        var control: String
        var app: Account
        /// The 302 offer's `token` for the stand-in's coturn (empty with `--no-turn`).
        var iceToken: [ICEToken]?
        struct ICEToken: Decodable { var urls: String; var username: String; var credential: String; var ttl: Int }
    }

    let process = Process()
    let ready: Ready
    private let lock = NSLock()
    private var errText = ""

    var mqttPort: Int { Int(ready.mqtt.split(separator: ":").last ?? "") ?? 0 }
    /// Everything the stand-in logged (each refusal with its reason).
    var log: String { lock.lock(); defer { lock.unlock() }; return errText }

    /// `licences`: "UUID,AUTHKEY,PRODUCTKEY[,DEVICEAUTHKEY]" each. `turn`: also start coturn
    /// (its log is `turnserver.log` in `ready.dir`). Python's start-up and the ready line take
    /// seconds of blocking reads: they run on a thread of their own (`offThePool`).
    static func start(licences: [String], extraArguments: [String] = [], turn: Bool = false) async throws -> StandinProcess {
        try await offThePool { try StandinProcess(licences: licences, extraArguments: extraArguments, turn: turn) }
    }

    private init(licences: [String], extraArguments: [String], turn: Bool) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", packageRootPath + "/scripts/tuya-cloud-standin.py"] + (turn ? [] : ["--no-turn"])
            + licences.flatMap { ["--licence", $0] } + extraArguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // The ready line (one JSON object); nothing else is written on stdout.
        var line = Data()
        let reader = out.fileHandleForReading
        while true {
            let byte = reader.readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            line += byte
        }
        do {
            ready = try JSONDecoder().decode(Ready.self, from: line)
        } catch {
            process.terminate()
            throw StandinError.noReadyLine(String(decoding: line, as: UTF8.self))
        }
        // What it logged before the ready line waits in the pipe (a few lines at most).
        err.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard !data.isEmpty, let self else { return }
            self.lock.lock(); self.errText += String(decoding: data, as: UTF8.self); self.lock.unlock()
        }
    }

    enum StandinError: Error { case noReadyLine(String), control(Int, String) }

    @discardableResult
    func post(_ path: String, _ body: String) async throws -> JSONValue? {
        let client = try ControlHTTPClient(baseURL: ready.control)
        let reply = try await client.request("POST", path, body: Array(body.utf8), timeout: 30)
        guard reply.status == 200 else { throw StandinError.control(reply.status, reply.text) }
        return reply.json
    }

    /// As the app scanning the QR code: the token goes out on d/ai/<uuid> once the device listens.
    func bind(uuid: String) async throws { try await post("/standin/bind", #"{"uuid":"\#(uuid)","wait":30}"#) }

    /// A bind whose token is already expired (`ttl` 0), or sealed with a key that is not the device's.
    func bind(uuid: String, ttl: Int = 600, seal: String = "authkey") async throws {
        try await post("/standin/bind", #"{"uuid":"\#(uuid)","wait":30,"ttl":\#(ttl),"seal":"\#(seal)"}"#)
    }

    /// The device is removed from its home: its next CONNECT gets CONNACK 5.
    func unbind(uuid: String) async throws { try await post("/standin/unbind", #"{"uuid":"\#(uuid)"}"#) }

    /// `GET /standin/state`: devices (localKey, outMessages, reportedDps...) and refusal counts.
    func state() async throws -> [String: JSONValue] {
        let reply = try await ControlHTTPClient(baseURL: ready.control).request("GET", "/standin/state")
        guard case .object(let root)? = reply.json else { return [:] }
        return root
    }

    /// How many messages `devId` published on its out topic that opened as pv2.2 under its localKey.
    func checkedOutMessages(devId: String) async throws -> Int64 {
        guard case .array(let devices)? = try await state()["devices"] else { return 0 }
        for case .object(let device) in devices where device["devId"] == .string(devId) {
            if case .int(let count)? = device["outMessages"] { return count }
        }
        return 0
    }

    /// The localKey the cloud gave `devId` (as Tuya's cloud API gives it to the phone app).
    func localKey(devId: String) async throws -> String? {
        let reply = try await ControlHTTPClient(baseURL: ready.control).request("GET", "/standin/state")
        guard case .object(let root)? = reply.json, case .array(let devices)? = root["devices"] else { return nil }
        for case .object(let device) in devices where device["devId"] == .string(devId) {
            if case .string(let key)? = device["localKey"] { return key }
        }
        return nil
    }

    /// `mqtts://app:<password>@127.0.0.1:<port>`: the app simulator's account on the stand-in's broker.
    var appBrokerURL: String { "mqtts://\(ready.app.username):\(ready.app.password)@127.0.0.1:\(mqttPort)" }

    /// SIGTERM, then SIGKILL if it is still there after 10 s (never a wait without end). The wait
    /// for its exit is on a thread of its own: the caller (a test's `defer`) goes on at once.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        let process = self.process
        Thread.detachNewThread {
            let deadline = Date().addingTimeInterval(10)
            while process.isRunning, Date() < deadline { usleep(20_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
