import CallEngine
import Emulator
import Foundation
import Hummingbird
import IPCWire

/// One route the server answers, as the OpenAPI document names it (`/api/devices/{devId}`).
public struct ControlRoute: Sendable, Hashable, CustomStringConvertible {
    public var method: String
    public var path: String
    public var description: String { "\(method) \(path)" }
}

/// The API's endpoints: one handler each, registered through `add` so the list of routes the server
/// has is known (the OpenAPI test checks both ways).
struct ControlRoutes: Sendable {
    let registry: DeviceRegistry
    let phone: ConsolePhone?

    /// Every route `register` adds, in order.
    static let all: [ControlRoute] = {
        let recorder = RouteRecorder()
        ControlRoutes.table(recorder.record)
        return recorder.routes
    }()

    typealias Handler = @Sendable (ControlRoutes, Request, BasicRequestContext) async throws -> Response

    /// The table itself: method, path (OpenAPI spelling), handler.
    static func table(_ add: (HTTPRequest.Method, String, @escaping Handler) -> Void) {
        add(.get, "/", { _, _, _ in html(ConsolePage.html) })
        add(.get, "/openapi.json", { _, _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.json)))
        })
        add(.get, "/metrics", { r, _, _ in
            let text = await r.registry.metricsText()
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(string: text)))
        })
        add(.get, "/api/devices", { r, req, _ in
            // Paged and filtered: a fleet holds thousands (offset, limit; prefix of the devId; phase).
            let q = req.uri.queryParameters
            let offset = try queryInteger(q.get("offset"), "offset", 0...Int.max) ?? 0
            let limit = try queryInteger(q.get("limit"), "limit", 1...10_000) ?? 1000
            var phase: String?
            if let text = q.get("phase") {
                guard CallPhase(rawValue: text) != nil else {
                    throw ControlError.badRequest("phase must be idle, ringingIncoming, ringingOutgoing, answered or shutDown", field: "phase")
                }
                phase = text
            }
            let page = await r.registry.page(offset: offset, limit: limit, prefix: q.get("prefix"), phase: phase)
            var list: [JSONValue] = []
            for entry in page.devices { list.append(await state(of: entry)) }
            return json(.object(["devices": .array(list), "total": .int(Int64(page.total)),
                                 "offset": .int(Int64(offset)), "limit": .int(Int64(limit))]))
        })
        add(.get, "/api/fleet", { r, _, _ in
            guard let fleet = await r.registry.fleet else { throw ControlError(status: 404, "this process runs no fleet") }
            return json(await fleetView(fleet))
        })
        add(.post, "/api/fleet/faults/drop-connection", { r, req, _ in
            guard let fleet = await r.registry.fleet else { throw ControlError(status: 404, "this process runs no fleet") }
            let body = try await RequestBody(bytes(req))
            try body.only(["seconds", "jitterSeconds"])
            guard let seconds = try body.number("seconds", "a number of seconds, 0 to 3600"), (0...3600).contains(seconds) else {
                throw ControlError.badRequest("seconds must be a number of seconds, 0 to 3600", field: "seconds")
            }
            let jitter = try body.number("jitterSeconds", "a number of seconds, 0 to 3600") ?? 0
            guard (0...3600).contains(jitter) else {
                throw ControlError.badRequest("jitterSeconds must be a number of seconds, 0 to 3600", field: "jitterSeconds")
            }
            let dropped = await fleet.dropAllConnections(seconds: seconds, jitterSeconds: jitter)
            return json(.object(["dropped": .int(Int64(dropped)), "seconds": .double(seconds), "jitterSeconds": .double(jitter)]),
                        status: .accepted)
        })
        add(.put, "/api/fleet/faults/heartbeats", { r, req, _ in
            guard let fleet = await r.registry.fleet else { throw ControlError(status: 404, "this process runs no fleet") }
            let body = try await RequestBody(bytes(req))
            try body.only(["suppressFraction"])
            guard let fraction = try body.number("suppressFraction", "a fraction from 0 to 1"), (0...1).contains(fraction) else {
                throw ControlError.badRequest("suppressFraction must be a fraction from 0 to 1", field: "suppressFraction")
            }
            let suppressed = await fleet.suppressHeartbeatReplies(fraction: fraction)
            return json(.object(["suppressing": .int(Int64(suppressed)), "devices": .int(Int64(fleet.devices.count))]))
        })
        add(.get, "/api/devices/{devId}", { r, _, c in json(await state(of: try await r.entry(c))) })
        add(.post, "/api/devices/{devId}/press", { r, req, c in
            let entry = try await r.entry(c)
            let body = try await RequestBody(bytes(req))
            try body.only(["targets", "callType", "timeout"])
            let targets = try body.strings("targets") ?? []
            var callType: CallType?
            if let n = try body.integer("callType", "1, 2 or 3") {
                guard let t = CallType(rawValue: Int(n)) else { throw ControlError.badRequest("callType must be 1, 2 or 3", field: "callType") }
                callType = t
            }
            let timeout = try body.number("timeout", "a number of seconds greater than 0")
            if let timeout, !(timeout > 0 && timeout <= 3600) {
                throw ControlError.badRequest("timeout must be a number of seconds greater than 0 (at most 3600)", field: "timeout")
            }
            let session = try await entry.device.press(targets: targets, callType: callType, timeoutSeconds: timeout)
            return json(.object(["sessionId": .string(session), "device": await state(of: entry)]))
        })
        add(.post, "/api/devices/{devId}/answer", { r, _, c in try await r.act(c) { d throws(CallActionError) in try await d.answer() } })
        add(.post, "/api/devices/{devId}/reject", { r, _, c in try await r.act(c) { d throws(CallActionError) in try await d.reject() } })
        add(.post, "/api/devices/{devId}/cancel", { r, _, c in try await r.act(c) { d throws(CallActionError) in try await d.cancel() } })
        add(.post, "/api/devices/{devId}/hangup", { r, _, c in try await r.act(c) { d throws(CallActionError) in try await d.hangUp() } })
        add(.put, "/api/devices/{devId}/answer-policy", { r, req, c in
            let entry = try await r.entry(c)
            let body = try await RequestBody(bytes(req))
            try body.only(["policy", "afterSeconds"])
            let policy = try parsePolicy(body)
            try await entry.device.setAnswerPolicy(policy)
            return json(await state(of: entry))
        })
        add(.get, "/api/devices/{devId}/faults", { r, _, c in
            let entry = try await r.entry(c)
            return json(JSONViews.faults(await entry.device.faults, actingBusy: await entry.device.status.actingBusy))
        })
        add(.put, "/api/devices/{devId}/faults", { r, req, c in
            let entry = try await r.entry(c)
            let body = try await RequestBody(bytes(req))
            try body.only(["heartbeatRepliesSuppressed", "replyDelayMs", "actingBusy"])
            var faults = await entry.device.faults
            if let b = try body.bool("heartbeatRepliesSuppressed") { faults.heartbeatRepliesSuppressed = b }
            if let ms = try body.integer("replyDelayMs", "an integer number of milliseconds, 0 to 600000") {
                guard (0...600_000).contains(ms) else {
                    throw ControlError.badRequest("replyDelayMs must be an integer number of milliseconds, 0 to 600000", field: "replyDelayMs")
                }
                faults.replyDelayMs = ms
            }
            let busy = try body.bool("actingBusy")
            // Acting busy goes through the engine and may be refused (409): then nothing changes.
            if let busy { try await entry.device.setActingBusy(busy) }
            await entry.device.setFaults(faults)
            return json(JSONViews.faults(await entry.device.faults, actingBusy: await entry.device.status.actingBusy))
        })
        add(.post, "/api/devices/{devId}/faults/drop-connection", { r, req, c in
            let entry = try await r.entry(c)
            let body = try await RequestBody(bytes(req))
            try body.only(["seconds"])
            guard let seconds = try body.number("seconds", "a number of seconds, 0 to 3600"), (0...3600).contains(seconds) else {
                throw ControlError.badRequest("seconds must be a number of seconds, 0 to 3600", field: "seconds")
            }
            await entry.device.dropConnection(for: seconds)
            return json(.object(["dropped": .bool(true), "seconds": .double(seconds)]), status: .accepted)
        })
        add(.post, "/api/devices/{devId}/faults/drop-p2p", { r, _, c in
            let entry = try await r.entry(c)
            let dropped = await entry.device.dropMediaLinks()
            return json(.object(["dropped": .int(Int64(dropped))]), status: .accepted)
        })
        add(.get, "/api/devices/{devId}/journal", { r, req, c in
            let entry = try await r.entry(c)
            var limit = 100
            if let text = req.uri.queryParameters.get("limit") {
                guard let n = Int(text), n > 0, n <= 10_000 else {
                    throw ControlError.badRequest("limit must be an integer 1-10000", field: "limit")
                }
                limit = n
            }
            let entries = await entry.journal.entries(limit: limit)
            return json(.object(["devId": .string(entry.devId), "file": entry.journal.path.map(JSONValue.string) ?? .null,
                                 "entries": .array(entries)]))
        })
        add(.get, "/api/events", { r, req, _ in
            let filter = req.uri.queryParameters.get("device")
            if let filter, await r.registry.device(filter) == nil {
                throw ControlError(status: 404, "no device '\(filter)'", field: "device")
            }
            let events = r.registry.hub.subscribe(device: filter)
            return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
                            body: ResponseBody { writer in
                                // Events, plus a comment line every 15 s so a client that went away is
                                // noticed (the write fails) even when nothing happens.
                                let (chunks, sink) = AsyncStream.makeStream(of: String.self)
                                let forward = Task {
                                    for await event in events { sink.yield("data: \(event.jsonString)\n\n") }
                                    sink.finish()
                                }
                                let keepalive = Task {
                                    while !Task.isCancelled {
                                        try? await Task.sleep(for: .seconds(15))
                                        sink.yield(": keepalive\n\n")
                                    }
                                }
                                defer {
                                    forward.cancel()
                                    keepalive.cancel()
                                }
                                try await writer.write(ByteBuffer(string: ": ipcemu events\n\n"))
                                for await chunk in chunks { try await writer.write(ByteBuffer(string: chunk)) }
                                try await writer.finish(nil)
                            })
        })
        add(.get, "/api/phone", { r, _, _ in json(try await r.consolePhone().state()) })
        add(.post, "/api/phone/answer", { r, _, _ in try await r.phoneAct { p throws(CallActionError) in try await p.answer() } })
        add(.post, "/api/phone/reject", { r, _, _ in try await r.phoneAct { p throws(CallActionError) in try await p.reject() } })
        add(.post, "/api/phone/hangup", { r, _, _ in try await r.phoneAct { p throws(CallActionError) in try await p.hangUp() } })
        add(.post, "/api/phone/video", { r, req, _ in
            let phone = try r.consolePhone()
            let body = try await RequestBody(bytes(req))
            try body.only(["sdp"])
            guard let sdp = try body.string("sdp"), sdp.hasPrefix("v=0"), sdp.contains("m=video") else {
                throw ControlError.badRequest("sdp is required: the browser's WebRTC offer (v=0..., with a video section)", field: "sdp")
            }
            let answer = try await phone.openVideo(offerSDP: sdp)
            return json(.object(["sdp": .string(answer), "phone": await phone.state()]))
        })
        add(.post, "/api/phone/video/resolution", { r, req, _ in
            let phone = try r.consolePhone()
            let body = try await RequestBody(bytes(req))
            try body.only(["stream"])
            let stream: StreamType
            switch try body.string("stream") {
            case "main": stream = .main
            case "sub": stream = .sub
            default: throw ControlError.badRequest("stream must be main or sub", field: "stream")
            }
            try await phone.switchStream(to: stream)
            return json(await phone.state())
        })
        add(.post, "/api/phone/video/close", { r, _, _ in
            let phone = try r.consolePhone()
            await phone.closeVideo()
            return json(await phone.state())
        })
    }

    func register(on router: Router<BasicRequestContext>) {
        Self.table { method, path, handler in
            let routes = self
            router.on(RouterPath(Self.routerPath(path)), method: method) { request, context -> Response in
                do {
                    return try await handler(routes, request, context)
                } catch let error as ControlError {
                    return Self.json(Self.errorBody(error), status: HTTPResponse.Status(code: error.status))
                } catch let error as CallActionError {
                    let e = Self.controlError(error)
                    return Self.json(Self.errorBody(e), status: HTTPResponse.Status(code: e.status))
                }
            }
        }
    }

    /// The engine refused: a bad argument is the request's fault (400), anything else makes no
    /// sense in the current state (409). Either way the engine's own words.
    static func controlError(_ error: CallActionError) -> ControlError {
        switch error {
        case .invalidArgument: ControlError(status: 400, error.description)
        case .noTargets: ControlError(status: 400, error.description, field: "targets")
        case .onCalling, .wrongPhase, .notInThisRole, .shutDown: ControlError(status: 409, error.description)
        }
    }

    /// `/api/devices/{devId}` -> `/api/devices/:devId`.
    static func routerPath(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { part in
            part.hasPrefix("{") && part.hasSuffix("}") ? ":" + part.dropFirst().dropLast() : part
        }.joined(separator: "/")
    }

    // MARK: Helpers

    func entry(_ context: BasicRequestContext) async throws(ControlError) -> ControlledDevice {
        let id = context.parameters.get("devId") ?? ""
        guard let entry = await registry.device(id) else { throw ControlError(status: 404, "no device '\(id)'", field: "devId") }
        return entry
    }

    func act(_ context: BasicRequestContext, _ action: (Device) async throws(CallActionError) -> Void) async throws -> Response {
        let entry = try await entry(context)
        try await action(entry.device)
        return Self.json(await Self.state(of: entry))
    }

    func consolePhone() throws(ControlError) -> ConsolePhone {
        guard let phone else { throw ControlError(status: 404, "this server runs no console phone") }
        return phone
    }

    func phoneAct(_ action: (ConsolePhone) async throws(CallActionError) -> Void) async throws -> Response {
        let phone = try consolePhone()
        try await action(phone)
        return Self.json(await phone.state())
    }

    static func state(of entry: ControlledDevice) async -> JSONValue {
        let d = entry.device
        return JSONViews.state(await d.status, device: d, faults: await d.faults)
    }

    /// An integer query parameter in `range`, or nil when absent.
    static func queryInteger(_ text: String?, _ name: String, _ range: ClosedRange<Int>) throws(ControlError) -> Int? {
        guard let text else { return nil }
        guard let n = Int(text), range.contains(n) else {
            let upper = range.upperBound == Int.max ? "or more" : "to \(range.upperBound)"
            throw .badRequest("\(name) must be an integer \(range.lowerBound) \(upper)", field: name)
        }
        return n
    }

    static func fleetView(_ fleet: Fleet) async -> JSONValue {
        let devices = fleet.devices
        var online = 0
        var inCall = 0
        for d in devices {
            let s = await d.status
            if s.connected { online += 1 }
            if s.phase != .idle && s.phase != .shutDown { inCall += 1 }
        }
        return .object(["devices": .int(Int64(devices.count)), "online": .int(Int64(online)),
                        "inCall": .int(Int64(inCall)), "planned": .int(Int64(fleet.positions.count)),
                        "firstPosition": .int(Int64(fleet.positions.lowerBound))])
    }

    static func bytes(_ request: Request) async throws -> [UInt8] {
        var request = request
        let buffer = try await request.collectBody(upTo: 1 << 18)
        return Array(buffer.readableBytesView)
    }

    static func parsePolicy(_ body: RequestBody) throws(ControlError) -> AnswerPolicy {
        guard let name = try body.string("policy") else {
            throw .badRequest("policy is required: answer, reject, ignore, busy or manual", field: "policy")
        }
        let after = try body.number("afterSeconds", "a number of seconds, 0 or more")
        if let after, !(after >= 0 && after <= 3600) {
            throw .badRequest("afterSeconds must be a number of seconds, 0 to 3600", field: "afterSeconds")
        }
        if after != nil, name != "answer", name != "reject" {
            throw .badRequest("afterSeconds goes with policy answer or reject only", field: "afterSeconds")
        }
        switch name {
        case "answer": return .answerAfter(ms: Int64(((after ?? 0) * 1000).rounded()))
        case "reject": return after.map { .rejectAfter(ms: Int64(($0 * 1000).rounded())) } ?? .reject
        case "ignore": return .ignore
        case "busy": return .busy
        case "manual": return .manual
        default: throw .badRequest("policy must be answer, reject, ignore, busy or manual", field: "policy")
        }
    }

    static func errorBody(_ e: ControlError) -> JSONValue {
        .object(["error": .string(e.message), "field": e.field.map(JSONValue.string) ?? .null])
    }

    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json"],
                 body: .init(byteBuffer: ByteBuffer(bytes: value.serialized() + [UInt8(ascii: "\n")])))
    }

    static func html(_ text: String) -> Response {
        Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}

final class RouteRecorder: @unchecked Sendable {
    var routes: [ControlRoute] = []
    func record(_ method: HTTPRequest.Method, _ path: String, _: @escaping ControlRoutes.Handler) {
        routes.append(ControlRoute(method: method.rawValue, path: path))
    }
}

extension ControlServer {
    /// Every route the server answers (method and OpenAPI path).
    public static var routes: [ControlRoute] { ControlRoutes.all }
}
