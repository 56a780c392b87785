import CallEngine
import Emulator
import Foundation
import IPCWire
import OpenAPIRuntime
import ControlAPISpec

/// The API's operations (openapi.yaml; `APIProtocol` and every type here are generated from it).
/// The generated layer decodes the request (shape, types, enums, unknown fields); a handler checks
/// what the schema cannot say (ranges, and whatever depends on the state) and throws `ControlError`
/// or the engine's `CallActionError`, which `ControlErrorMiddleware` answers as JSON naming the field.
struct ControlHandlers: APIProtocol {
    typealias S = Components.Schemas
    let registry: DeviceRegistry
    let phone: ConsolePhone?
    /// Seconds between the event stream's keepalive comments (a client that went away is noticed
    /// when the write fails, even when nothing happens).
    var keepaliveInterval: Duration = .seconds(15)

    // MARK: Console, document, metrics

    func getConsole(_ input: Operations.GetConsole.Input) async throws -> Operations.GetConsole.Output {
        .ok(.init(body: .html(HTTPBody(ConsolePage.html))))
    }

    func getOpenAPIDocument(_ input: Operations.GetOpenAPIDocument.Input) async throws -> Operations.GetOpenAPIDocument.Output {
        .ok(.init(body: .yaml(HTTPBody(OpenAPISpec.yaml))))
    }

    func getMetrics(_ input: Operations.GetMetrics.Input) async throws -> Operations.GetMetrics.Output {
        .ok(.init(body: .textPlainCharsetUtf8Version_0_0_4(HTTPBody(await registry.metricsText()))))
    }

    // MARK: Devices

    func listDevices(_ input: Operations.ListDevices.Input) async throws -> Operations.ListDevices.Output {
        let q = input.query
        let offset = q.offset ?? 0
        guard (0...Int(Int32.max)).contains(offset) else {
            throw ControlError.badRequest("offset must be an integer 0 to \(Int32.max)", field: "offset")
        }
        let limit = q.limit ?? 1000
        guard (1...10_000).contains(limit) else { throw ControlError.badRequest("limit must be an integer 1 to 10000", field: "limit") }
        let page = await registry.page(offset: offset, limit: limit, prefix: q.prefix, phase: q.phase?.rawValue)
        var list: [S.DeviceState] = []
        for entry in page.devices { list.append(await Self.state(of: entry)) }
        return .ok(.init(body: .json(.init(devices: list, total: page.total, offset: offset, limit: limit))))
    }

    func getDevice(_ input: Operations.GetDevice.Input) async throws -> Operations.GetDevice.Output {
        .ok(.init(body: .json(await Self.state(of: try await entry(input.path.devId)))))
    }

    func press(_ input: Operations.Press.Input) async throws -> Operations.Press.Output {
        let entry = try await entry(input.path.devId)
        var body = S.PressRequest()
        if case .json(let b)? = input.body { body = b }
        for t in body.targets ?? [] where t.isEmpty {
            throw ControlError.badRequest("targets must be an array of non-empty strings", field: "targets")
        }
        var callType: CallType?
        if let n = body.callType {
            guard let t = CallType(rawValue: n) else { throw ControlError.badRequest("callType must be 1, 2 or 3", field: "callType") }
            callType = t
        }
        if let timeout = body.timeout, !(timeout >= 0.001 && timeout <= 3600) {
            throw ControlError.badRequest("timeout must be a number of seconds, 0.001 to 3600", field: "timeout")
        }
        let session = try await entry.device.press(targets: body.targets ?? [], callType: callType, timeoutSeconds: body.timeout)
        return .ok(.init(body: .json(.init(sessionId: session, device: await Self.state(of: entry)))))
    }

    func answer(_ input: Operations.Answer.Input) async throws -> Operations.Answer.Output {
        .ok(.init(body: .json(try await act(input.path.devId) { d throws(CallActionError) in try await d.answer() })))
    }

    func reject(_ input: Operations.Reject.Input) async throws -> Operations.Reject.Output {
        .ok(.init(body: .json(try await act(input.path.devId) { d throws(CallActionError) in try await d.reject() })))
    }

    func cancel(_ input: Operations.Cancel.Input) async throws -> Operations.Cancel.Output {
        .ok(.init(body: .json(try await act(input.path.devId) { d throws(CallActionError) in try await d.cancel() })))
    }

    func hangUp(_ input: Operations.HangUp.Input) async throws -> Operations.HangUp.Output {
        .ok(.init(body: .json(try await act(input.path.devId) { d throws(CallActionError) in try await d.hangUp() })))
    }

    func setAnswerPolicy(_ input: Operations.SetAnswerPolicy.Input) async throws -> Operations.SetAnswerPolicy.Output {
        let entry = try await entry(input.path.devId)
        guard case .json(let body) = input.body else {
            throw ControlError.badRequest("policy is required: answer, reject, ignore, busy or manual", field: "policy")
        }
        try await entry.device.setAnswerPolicy(try Self.policy(body))
        return .ok(.init(body: .json(await Self.state(of: entry))))
    }

    func getFaults(_ input: Operations.GetFaults.Input) async throws -> Operations.GetFaults.Output {
        let entry = try await entry(input.path.devId)
        return .ok(.init(body: .json(APIViews.faults(await entry.device.faults, actingBusy: await entry.device.status.actingBusy))))
    }

    func setFaults(_ input: Operations.SetFaults.Input) async throws -> Operations.SetFaults.Output {
        let entry = try await entry(input.path.devId)
        var body = S.FaultsRequest()
        if case .json(let b)? = input.body { body = b }
        var faults = await entry.device.faults
        if let b = body.heartbeatRepliesSuppressed { faults.heartbeatRepliesSuppressed = b }
        if let ms = body.replyDelayMs {
            guard (0...600_000).contains(ms) else {
                throw ControlError.badRequest("replyDelayMs must be an integer number of milliseconds, 0 to 600000", field: "replyDelayMs")
            }
            faults.replyDelayMs = Int64(ms)
        }
        // Acting busy goes through the engine and may be refused (409): then nothing changes.
        if let busy = body.actingBusy { try await entry.device.setActingBusy(busy) }
        await entry.device.setFaults(faults)
        return .ok(.init(body: .json(APIViews.faults(await entry.device.faults, actingBusy: await entry.device.status.actingBusy))))
    }

    func dropConnection(_ input: Operations.DropConnection.Input) async throws -> Operations.DropConnection.Output {
        let entry = try await entry(input.path.devId)
        guard case .json(let body) = input.body else {
            throw ControlError.badRequest("seconds must be a number of seconds, 0 to 3600", field: "seconds")
        }
        let seconds = try Self.seconds(body.seconds, "seconds")
        await entry.device.dropConnection(for: seconds)
        return .accepted(.init(body: .json(.init(dropped: true, seconds: seconds))))
    }

    func dropP2P(_ input: Operations.DropP2P.Input) async throws -> Operations.DropP2P.Output {
        let entry = try await entry(input.path.devId)
        return .accepted(.init(body: .json(.init(dropped: await entry.device.dropMediaLinks()))))
    }

    func getJournal(_ input: Operations.GetJournal.Input) async throws -> Operations.GetJournal.Output {
        let entry = try await entry(input.path.devId)
        let limit = input.query.limit ?? 100
        guard (1...10_000).contains(limit) else { throw ControlError.badRequest("limit must be an integer 1-10000", field: "limit") }
        let entries = await entry.journal.entries(limit: limit).map(APIViews.journalEntry)
        return .ok(.init(body: .json(.init(devId: entry.devId, file: entry.journal.path, entries: entries))))
    }

    // MARK: Events

    func events(_ input: Operations.Events.Input) async throws -> Operations.Events.Output {
        let filter = input.query.device
        if let filter, await registry.device(filter) == nil {
            throw ControlError(status: 404, "no device '\(filter)'", field: "device")
        }
        let subscription = registry.hub.subscription(device: filter)
        let interval = keepaliveInterval
        let keepalive = subscription.keepalive
        // The hub's bounded buffer is the only queue between the devices and the socket: the
        // keepalive ticks go into it too, so a reader that stops reading is cut off, not buffered.
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                keepalive.send()
            }
        }
        let sse = SSEItems(items: subscription.items, ticker: ticker)
        return .ok(.init(headers: .init(cacheControl: "no-cache"), body: .textEventStream(HTTPBody(sse, length: .unknown, iterationBehavior: .single))))
    }

    // MARK: Console phone

    func getPhone(_ input: Operations.GetPhone.Input) async throws -> Operations.GetPhone.Output {
        .ok(.init(body: .json(try await phoneState(try consolePhone()))))
    }

    func phoneAnswer(_ input: Operations.PhoneAnswer.Input) async throws -> Operations.PhoneAnswer.Output {
        .ok(.init(body: .json(try await phoneAct { p throws(CallActionError) in try await p.answer() })))
    }

    func phoneReject(_ input: Operations.PhoneReject.Input) async throws -> Operations.PhoneReject.Output {
        .ok(.init(body: .json(try await phoneAct { p throws(CallActionError) in try await p.reject() })))
    }

    func phoneHangUp(_ input: Operations.PhoneHangUp.Input) async throws -> Operations.PhoneHangUp.Output {
        .ok(.init(body: .json(try await phoneAct { p throws(CallActionError) in try await p.hangUp() })))
    }

    func phoneVideo(_ input: Operations.PhoneVideo.Input) async throws -> Operations.PhoneVideo.Output {
        let phone = try consolePhone()
        // Byte-wise, as the spec's pattern reads it: String's hasPrefix/contains compare characters,
        // and a combining mark after "v=0" (schemathesis sends such) makes a different first character.
        guard case .json(let body) = input.body, body.sdp.utf8.starts(with: "v=0".utf8),
              Array(body.sdp.utf8).firstRange(of: Array("m=video".utf8)) != nil else {
            throw ControlError.badRequest("sdp is required: the browser's WebRTC offer (v=0..., with a video section)", field: "sdp")
        }
        let answer = try await phone.openVideo(offerSDP: body.sdp)
        return .ok(.init(body: .json(.init(sdp: answer, phone: try await phoneState(phone)))))
    }

    func phoneVideoResolution(_ input: Operations.PhoneVideoResolution.Input) async throws
        -> Operations.PhoneVideoResolution.Output
    {
        let phone = try consolePhone()
        guard case .json(let body) = input.body else {
            throw ControlError.badRequest("stream is required: main or sub", field: "stream")
        }
        try await phone.switchStream(to: body.stream == .sub ? .sub : .main)
        return .ok(.init(body: .json(try await phoneState(phone))))
    }

    func phoneVideoClose(_ input: Operations.PhoneVideoClose.Input) async throws -> Operations.PhoneVideoClose.Output {
        let phone = try consolePhone()
        await phone.closeVideo()
        return .ok(.init(body: .json(try await phoneState(phone))))
    }

    // MARK: Fleet

    func getFleet(_ input: Operations.GetFleet.Input) async throws -> Operations.GetFleet.Output {
        let fleet = try await fleet()
        let devices = fleet.devices
        var online = 0
        var inCall = 0
        for d in devices {
            let s = await d.status
            if s.connected { online += 1 }
            if s.phase != .idle && s.phase != .shutDown { inCall += 1 }
        }
        let state = Components.Schemas.FleetState(devices: devices.count, online: online, inCall: inCall,
                                                  planned: fleet.positions.count, firstPosition: fleet.positions.lowerBound)
        return .ok(.init(body: .json(await Self.addingPower(of: fleet, to: state))))
    }

    func fleetDropConnection(_ input: Operations.FleetDropConnection.Input) async throws -> Operations.FleetDropConnection.Output {
        let fleet = try await fleet()
        guard case .json(let body) = input.body else {
            throw ControlError.badRequest("seconds must be a number of seconds, 0 to 3600", field: "seconds")
        }
        let seconds = try Self.seconds(body.seconds, "seconds")
        let jitter = try Self.seconds(body.jitterSeconds ?? 0, "jitterSeconds")
        let dropped = await fleet.dropAllConnections(seconds: seconds, jitterSeconds: jitter)
        return .accepted(.init(body: .json(.init(dropped: dropped, seconds: seconds, jitterSeconds: jitter))))
    }

    func fleetSuppressHeartbeats(_ input: Operations.FleetSuppressHeartbeats.Input) async throws -> Operations.FleetSuppressHeartbeats.Output {
        let fleet = try await fleet()
        guard case .json(let body) = input.body, body.suppressFraction.isFinite, (0...1).contains(body.suppressFraction) else {
            throw ControlError.badRequest("suppressFraction must be a fraction from 0 to 1", field: "suppressFraction")
        }
        let suppressed = await fleet.suppressHeartbeatReplies(fraction: body.suppressFraction)
        return .ok(.init(body: .json(.init(suppressing: suppressed, devices: fleet.devices.count))))
    }

    // MARK: Helpers

    func entry(_ devId: String) async throws(ControlError) -> ControlledDevice {
        guard let entry = await registry.device(devId) else { throw ControlError(status: 404, "no device '\(devId)'", field: "devId") }
        return entry
    }

    func act(_ devId: String, _ action: (Device) async throws(CallActionError) -> Void) async throws -> S.DeviceState {
        let entry = try await entry(devId)
        try await action(entry.device)
        return await Self.state(of: entry)
    }

    func fleet() async throws(ControlError) -> Fleet {
        guard let fleet = await registry.fleet else { throw ControlError(status: 404, "this process runs no fleet") }
        return fleet
    }

    func consolePhone() throws(ControlError) -> ConsolePhone {
        guard let phone else { throw ControlError(status: 404, "this server runs no console phone") }
        return phone
    }

    func phoneState(_ phone: ConsolePhone) async throws(ControlError) -> S.PhoneState {
        await phone.state()
    }

    func phoneAct(_ action: (ConsolePhone) async throws(CallActionError) -> Void) async throws -> S.PhoneState {
        let phone = try consolePhone()
        try await action(phone)
        return try await phoneState(phone)
    }

    static func state(of entry: ControlledDevice) async -> S.DeviceState {
        let d = entry.device
        return await APIViews.addingDoorbell(of: d, to: APIViews.state(await d.status, device: d, faults: await d.faults))
    }

    /// A number of seconds from 0 to 3600.
    static func seconds(_ value: Double, _ field: String) throws(ControlError) -> Double {
        guard value.isFinite, (0...3600).contains(value) else {
            throw .badRequest("\(field) must be a number of seconds, 0 to 3600", field: field)
        }
        return value
    }

    /// The engine's answer policy from the request (the schema has checked the policy's name, and
    /// that only answer and reject take `afterSeconds`).
    static func policy(_ body: S.AnswerPolicyRequest) throws(ControlError) -> AnswerPolicy {
        switch body {
        case .DelayedPolicyRequest(let r):
            let after = r.afterSeconds ?? 0
            guard after.isFinite, (0...3600).contains(after) else {
                throw .badRequest("afterSeconds must be a number of seconds, 0 to 3600", field: "afterSeconds")
            }
            let ms = Int64((after * 1000).rounded())
            switch r.policy {
            case .answer: return .answerAfter(ms: ms)
            case .reject: return ms == 0 ? .reject : .rejectAfter(ms: ms)
            }
        case .PlainPolicyRequest(let r):
            switch r.policy {
            case .ignore: return .ignore
            case .busy: return .busy
            case .manual: return .manual
            }
        }
    }
}

/// The event stream's bytes: `: ipcemu events` first, then one `data:` line per event and a
/// comment per keepalive. Ends when the hub ends the subscription; stops the ticker when dropped.
struct SSEItems: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>
    let items: AsyncStream<EventHub.Item>
    let ticker: Task<Void, Never>

    func makeAsyncIterator() -> Iterator { Iterator(items: items.makeAsyncIterator(), guardian: TickerGuard(ticker)) }

    struct Iterator: AsyncIteratorProtocol {
        var items: AsyncStream<EventHub.Item>.Iterator
        let guardian: TickerGuard
        var greeted = false

        mutating func next() async -> ArraySlice<UInt8>? {
            if !greeted {
                greeted = true
                return ArraySlice(": ipcemu events\n\n".utf8)
            }
            switch await items.next() {
            case .event(let json)?: return ArraySlice(Array("data: ".utf8) + json + Array("\n\n".utf8))
            case .keepalive?: return ArraySlice(": keepalive\n\n".utf8)
            case nil:
                guardian.ticker.cancel()
                return nil
            }
        }
    }
}

/// Cancels the keepalive ticker when the response body is dropped (the client went away).
final class TickerGuard: Sendable {
    let ticker: Task<Void, Never>
    init(_ ticker: Task<Void, Never>) { self.ticker = ticker }
    deinit { ticker.cancel() }
}
