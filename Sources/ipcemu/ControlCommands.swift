import ArgumentParser
import ControlAPI
import Foundation
import IPCWire
import OpenAPIRuntime
import ControlAPISpec

/// Options shared by the commands that drive a running device through its control API.
struct ControlClientOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Control API URL (default: $IPCEMU_CONTROL, else http://127.0.0.1:8080).", valueName: "URL"))
    var control: String?

    @Option(help: "Bearer token (default: $IPCEMU_CONTROL_TOKEN).")
    var token: String?

    @Option(help: ArgumentHelp("Device id; needed only when the process runs several devices.", valueName: "DEVID"))
    var device: String?

    /// The client generated from openapi.yaml, with the token and the API's errors as failures.
    func client(timeout: Duration = .seconds(60)) throws -> ControlClient {
        let env = ProcessInfo.processInfo.environment
        let url = control ?? env["IPCEMU_CONTROL"] ?? "http://127.0.0.1:8080"
        do {
            return try ControlClient(baseURL: url, token: token ?? env["IPCEMU_CONTROL_TOKEN"], timeout: timeout)
        } catch {
            throw ValidationError(error.message)
        }
    }

    /// The device to act on: --device, else the only one there is.
    func deviceId(_ client: ControlClient) async throws -> String {
        if let device { return device }
        let ids = try await client.call("GET /api/devices") { try await $0.listDevices().ok.body.json }.devices.map(\.devId)
        guard ids.count == 1, let only = ids.first else {
            throw ControlCommandFailure(ids.isEmpty ? "the control API has no device"
                                        : "several devices (\(ids.joined(separator: ", "))): name one with --device")
        }
        return only
    }
}

/// A failed control command: its message on stderr, exit status 1.
struct ControlCommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// Prints an API answer as JSON on stdout (one line, keys sorted).
func printJSON<T: Encodable>(_ value: T) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    if let data = try? encoder.encode(value) { say(String(decoding: data, as: UTF8.self)) }
}

/// Runs a control command body, turning failures into a message and exit status 1.
func runControl(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let failure as ControlCommandFailure {
        note("ipcemu: \(failure.description)")
        throw ExitCode.failure
    } catch let failure as ControlClientFailure {
        note("ipcemu: \(failure.description)")
        throw ExitCode.failure
    }
}

struct PressCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "press", abstract: "Press the doorbell of a running device (control API).")
    @OptionGroup var api: ControlClientOptions
    @Option(name: .customLong("target"), help: "App user to call (repeat for several; default: the household).")
    var targets: [String] = []
    @Option(help: "Call type: 1 one-to-one, 2 one-to-more, 3 one-to-more special (default: the device's).")
    var callType: CallTypeOption?
    @Option(help: "Seconds the call rings before not_answered.")
    var timeout: Double?

    func run() async throws {
        try await runControl {
            let client = try api.client()
            let id = try await api.deviceId(client)
            let body = Components.Schemas.PressRequest(targets: targets.isEmpty ? nil : targets, callType: callType?.rawValue, timeout: timeout)
            let reply = try await client.call("POST /api/devices/\(id)/press") {
                try await $0.press(path: .init(devId: id), body: .json(body)).ok.body.json
            }
            say(reply.sessionId)
        }
    }
}

/// answer / reject / cancel / hangup: one POST each.
struct DeviceActionCommand {
    static func run(_ api: ControlClientOptions, _ action: String) async throws {
        try await runControl {
            let client = try api.client()
            let id = try await api.deviceId(client)
            printJSON(try await client.call("POST /api/devices/\(id)/\(action)") { c -> Components.Schemas.DeviceState in
                switch action {
                case "answer": try await c.answer(path: .init(devId: id)).ok.body.json
                case "reject": try await c.reject(path: .init(devId: id)).ok.body.json
                case "cancel": try await c.cancel(path: .init(devId: id)).ok.body.json
                default: try await c.hangUp(path: .init(devId: id)).ok.body.json
                }
            })
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
            let client = try api.client()
            if let id = api.device {
                printJSON(try await client.call("GET /api/devices/\(id)") { try await $0.getDevice(path: .init(devId: id)).ok.body.json })
            } else {
                printJSON(try await client.call("GET /api/devices") { try await $0.listDevices().ok.body.json })
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
            let client = try api.client()
            let id = try await api.deviceId(client)
            var body = Components.Schemas.FaultsRequest()
            if clear { body = .init(heartbeatRepliesSuppressed: false, replyDelayMs: 0, actingBusy: false) }
            if noHeartbeatReplies { body.heartbeatRepliesSuppressed = true }
            if heartbeatReplies { body.heartbeatRepliesSuppressed = false }
            if let replyDelayMs { body.replyDelayMs = replyDelayMs }
            if busy { body.actingBusy = true }
            if notBusy { body.actingBusy = false }
            let path = "/api/devices/\(id)/faults"
            if let dropConnection {
                printJSON(try await client.call("POST \(path)/drop-connection") {
                    try await $0.dropConnection(path: .init(devId: id), body: .json(.init(seconds: dropConnection))).accepted.body.json
                })
            }
            if dropP2p {
                printJSON(try await client.call("POST \(path)/drop-p2p") { try await $0.dropP2P(path: .init(devId: id)).accepted.body.json })
            }
            if body != Components.Schemas.FaultsRequest() {
                printJSON(try await client.call("PUT \(path)") { try await $0.setFaults(path: .init(devId: id), body: .json(body)).ok.body.json })
            } else if dropConnection == nil, !dropP2p {
                printJSON(try await client.call("GET \(path)") { try await $0.getFaults(path: .init(devId: id)).ok.body.json })
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
            // The stream lasts as long as the process it watches: no request deadline.
            let client = try api.client(timeout: .seconds(10 * 365 * 86_400))
            let device = api.device
            let body = try await client.call("GET /api/events") { try await $0.events(query: .init(device: device)).ok.body.textEventStream }
            do {
                for try await event in body.asDecodedServerSentEvents() {
                    if let data = event.data { say(data) }
                }
            } catch {
                throw ControlCommandFailure("the event stream at \(client.baseURL)/api/events ended: \(error)")
            }
        }
    }
}
