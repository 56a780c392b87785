import ArgumentParser
import ControlAPI
import Foundation
import IPCWire

/// Options shared by the commands that drive a running device through its control API.
struct ControlClientOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Control API URL (default: $IPCEMU_CONTROL, else http://127.0.0.1:8080).", valueName: "URL"))
    var control: String?

    @Option(help: "Bearer token (default: $IPCEMU_CONTROL_TOKEN).")
    var token: String?

    @Option(help: ArgumentHelp("Device id; needed only when the process runs several devices.", valueName: "DEVID"))
    var device: String?

    var client: ControlHTTPClient {
        get throws {
            let env = ProcessInfo.processInfo.environment
            let url = control ?? env["IPCEMU_CONTROL"] ?? "http://127.0.0.1:8080"
            do {
                return try ControlHTTPClient(baseURL: url, token: token ?? env["IPCEMU_CONTROL_TOKEN"])
            } catch {
                throw ValidationError(error.description)
            }
        }
    }

    /// The device to act on: --device, else the only one there is.
    func deviceId(_ client: ControlHTTPClient) async throws -> String {
        if let device { return device }
        let reply = try await call(client, "GET", "/api/devices")
        guard case .object(let o)? = reply, case .array(let list)? = o["devices"] else {
            throw ControlCommandFailure("unexpected answer from \(client.baseURL)/api/devices")
        }
        let ids = list.compactMap { v -> String? in
            if case .object(let d) = v, case .string(let id)? = d["devId"] { return id }
            return nil
        }
        guard ids.count == 1, let only = ids.first else {
            throw ControlCommandFailure(ids.isEmpty ? "the control API has no device"
                                        : "several devices (\(ids.joined(separator: ", "))): name one with --device")
        }
        return only
    }

    /// One request; a non-2xx answer becomes an error carrying the API's message.
    @discardableResult
    func call(_ client: ControlHTTPClient, _ method: String, _ path: String, json: JSONValue? = nil) async throws -> JSONValue? {
        let reply: ControlHTTPReply
        do {
            reply = try await client.request(method, path, json: json)
        } catch {
            throw ControlCommandFailure(error.description)
        }
        guard (200..<300).contains(reply.status) else {
            var message = reply.text.trimmingCharacters(in: .whitespacesAndNewlines)
            if case .object(let o)? = reply.json, case .string(let e)? = o["error"] { message = e }
            throw ControlCommandFailure("\(method) \(path): HTTP \(reply.status): \(message)")
        }
        return reply.json
    }
}

/// A failed control command: its message on stderr, exit status 1.
struct ControlCommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// Prints an API answer as JSON on stdout.
func printJSON(_ value: JSONValue?) {
    if let value { say(value.jsonString) }
}

/// Runs a control command body, turning failures into a message and exit status 1.
func runControl(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let failure as ControlCommandFailure {
        note("ipcemu: \(failure.description)")
        throw ExitCode.failure
    }
}

struct PressCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "press", abstract: "Press the doorbell of a running device (control API).")
    @OptionGroup var api: ControlClientOptions
    @Option(name: .customLong("target"), help: "App user to call (repeat for several; default: the household).")
    var targets: [String] = []
    @Option(help: "Call type: 1 one-to-one, 2 one-to-more, 3 one-to-more special.")
    var callType: Int?
    @Option(help: "Seconds the call rings before not_answered.")
    var timeout: Double?

    func run() async throws {
        try await runControl {
            let client = try api.client
            let id = try await api.deviceId(client)
            var body: [String: JSONValue] = [:]
            if !targets.isEmpty { body["targets"] = .array(targets.map(JSONValue.string)) }
            if let callType { body["callType"] = .int(Int64(callType)) }
            if let timeout { body["timeout"] = .double(timeout) }
            let reply = try await api.call(client, "POST", "/api/devices/\(id)/press", json: .object(body))
            if case .object(let o)? = reply, case .string(let s)? = o["sessionId"] { say(s) }
        }
    }
}

/// answer / reject / cancel / hangup: one POST each.
struct DeviceActionCommand {
    static func run(_ api: ControlClientOptions, _ action: String) async throws {
        try await runControl {
            let client = try api.client
            let id = try await api.deviceId(client)
            printJSON(try await api.call(client, "POST", "/api/devices/\(id)/\(action)"))
        }
    }
}

struct AnswerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "answer", abstract: "Answer the ringing incoming call (control API).")
    @OptionGroup var api: ControlClientOptions
    func run() async throws { try await DeviceActionCommand.run(api, "answer") }
}

struct RejectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "reject", abstract: "Reject the ringing incoming call (control API).")
    @OptionGroup var api: ControlClientOptions
    func run() async throws { try await DeviceActionCommand.run(api, "reject") }
}

struct CancelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "cancel", abstract: "Cancel the doorbell call still ringing (control API).")
    @OptionGroup var api: ControlClientOptions
    func run() async throws { try await DeviceActionCommand.run(api, "cancel") }
}

struct HangUpCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "hangup", abstract: "Hang up the answered call (control API).")
    @OptionGroup var api: ControlClientOptions
    func run() async throws { try await DeviceActionCommand.run(api, "hangup") }
}

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show a running device's state (control API; every device without --device).")
    @OptionGroup var api: ControlClientOptions
    func run() async throws {
        try await runControl {
            let client = try api.client
            if let id = api.device {
                printJSON(try await api.call(client, "GET", "/api/devices/\(id)"))
            } else {
                printJSON(try await api.call(client, "GET", "/api/devices"))
            }
        }
    }
}

struct FaultsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "faults", abstract: "Show or inject faults into a running device (control API).",
        discussion: "Without options it prints the faults in force. Examples: --no-heartbeat-replies, --reply-delay-ms 2000, --busy, --drop-connection 5, --clear.")
    @OptionGroup var api: ControlClientOptions
    @Flag(help: "Stop answering the app's heartbeats (the app ends the call with -2532).")
    var noHeartbeatReplies = false
    @Flag(help: "Answer heartbeats again.")
    var heartbeatReplies = false
    @Option(help: "Publish every reply this many milliseconds late (0: on time).")
    var replyDelayMs: Int?
    @Flag(help: "Act busy: every incoming call gets busy.")
    var busy = false
    @Flag(help: "Stop acting busy.")
    var notBusy = false
    @Option(help: ArgumentHelp("Drop the MQTT connection (the broker publishes the last will) and reconnect after SECONDS.", valueName: "SECONDS"))
    var dropConnection: Double?
    @Flag(help: "Drop the P2P media link (needs WebRTC; answers 501 until then).")
    var dropP2p = false
    @Flag(help: "Clear every fault.")
    var clear = false

    func run() async throws {
        try await runControl {
            let client = try api.client
            let id = try await api.deviceId(client)
            var body: [String: JSONValue] = [:]
            if clear {
                body = ["heartbeatRepliesSuppressed": .bool(false), "replyDelayMs": .int(0), "actingBusy": .bool(false)]
            }
            if noHeartbeatReplies { body["heartbeatRepliesSuppressed"] = .bool(true) }
            if heartbeatReplies { body["heartbeatRepliesSuppressed"] = .bool(false) }
            if let replyDelayMs { body["replyDelayMs"] = .int(Int64(replyDelayMs)) }
            if busy { body["actingBusy"] = .bool(true) }
            if notBusy { body["actingBusy"] = .bool(false) }
            if let dropConnection {
                printJSON(try await api.call(client, "POST", "/api/devices/\(id)/faults/drop-connection",
                                             json: .object(["seconds": .double(dropConnection)])))
            }
            if dropP2p {
                printJSON(try await api.call(client, "POST", "/api/devices/\(id)/faults/drop-p2p"))
            }
            if !body.isEmpty {
                printJSON(try await api.call(client, "PUT", "/api/devices/\(id)/faults", json: .object(body)))
            } else if dropConnection == nil, !dropP2p {
                printJSON(try await api.call(client, "GET", "/api/devices/\(id)/faults"))
            }
        }
    }
}

struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events", abstract: "Print a running process's call events as they happen, one JSON object a line (control API).")
    @OptionGroup var api: ControlClientOptions

    func run() async throws {
        try await runControl {
            let client = try api.client
            let query = api.device.map { "?device=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0) } ?? ""
            let stream = ControlEventStream(client: client, path: "/api/events" + query)
            guard await stream.waitUntilOpen() else {
                // Ask once more in the ordinary way for a clear reason (unreachable, 401, 404).
                try await api.call(client, "GET", "/api/devices" + (api.device.map { "/" + $0 } ?? ""))
                throw ControlCommandFailure("the event stream at \(client.baseURL)/api/events did not open")
            }
            for await line in stream.events { say(line) }
        }
    }
}
