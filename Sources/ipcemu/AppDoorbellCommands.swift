import AppSimulator
import ArgumentParser
import CallEngine
import Foundation
import IPCWire

// PROTOCOL.md 8, the app side on the command line: `ipcemu app wake`, `ipcemu app dps`, and what
// `ipcemu app listen` does with doorbell presses (43) besides §3 calls.

/// `ipcemu app listen --answer`: one word for both kinds of call a device makes.
///
/// | value | §3 call (`screen_ipc`) | doorbell call (43, `video_doorbell`) |
/// |---|---|---|
/// | `auto`, `accept` | `answer` | `accept` |
/// | `reject`, `stop` | `reject` | `stop` (decline: it rings on for the others) |
/// | `busy` | `busy` | `stop` |
/// | `ignore` | let it ring | let it ring |
/// | `manual` | ring only (Ctrl-C ends) | ring only |
enum ListenAnswer: String, CaseIterable, ExpressibleByArgument {
    case auto, accept, reject, stop, busy, ignore, manual

    /// The app engines' policy (both take the same; the doorbell engine reads reject and busy as
    /// `stop`), with `--answer-delay` for answering and rejecting.
    func policy(delaySeconds: Double) -> AnswerPolicy {
        let ms = Int64((delaySeconds * 1000).rounded())
        switch self {
        case .auto, .accept: return .answerAfter(ms: ms)
        case .reject, .stop: return ms > 0 ? .rejectAfter(ms: ms) : .reject
        case .busy: return .busy
        case .ignore: return .ignore
        case .manual: return .manual
        }
    }
}

/// `ipcemu app dps --set ID=VALUE`: one DP and its value (PROTOCOL.md 8.3). The value is typed by
/// the DP catalogue where it fits the DP's type (`149=true` a bool, `147=30` an integer, `146=1`
/// the string "1" of an enum DP); otherwise, and for DPs outside the catalogue, `true`/`false` is
/// a bool, digits (with an optional `-`) an integer, anything else a string. Quotes (`'…'` or
/// `"…"`) always make a string, so a wrong type can be sent on purpose (`149='yes'`).
struct DPAssignment: ExpressibleByArgument, Equatable, CustomStringConvertible {
    var id: DPId
    var value: DPValue

    init(id: DPId, value: DPValue) {
        self.id = id
        self.value = value
    }

    init?(argument: String) {
        guard let eq = argument.firstIndex(of: "="), let id = DPKey.id(String(argument[..<eq])) else { return nil }
        self.init(id: id, value: Self.value(String(argument[argument.index(after: eq)...]), for: id))
    }

    static func value(_ text: String, for id: DPId) -> DPValue {
        if text.count >= 2, let first = text.first, first == "'" || first == "\"", text.last == first {
            return .string(String(text.dropFirst().dropLast()))
        }
        let guessed = guess(text)
        guard let definition = DataPointCatalogue.definition(id) else { return guessed }
        switch definition.type {
        case .bool, .int:
            return guessed
        case .string, .enumeration, .raw:
            return .string(text)
        }
    }

    private static func guess(_ text: String) -> DPValue {
        switch text {
        case "true": return .bool(true)
        case "false": return .bool(false)
        default:
            let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
            if !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let i = Int64(text) { return .int(i) }
            return .string(text)
        }
    }

    var description: String { "\(id)=\(value)" }
}

extension EventPrinter {
    /// PROTOCOL.md 8 events, one line each (nil: not printed).
    static func describeDoorbell(_ event: AppEvent) -> String? {
        switch event {
        case .doorbellPressed(let p): "<- 43 press from=\(p.devId) call=\(p.edata) etype=\(p.etype)"
        case .doorbellRinging(let devId, let callId, _): "ringing: doorbell \(devId) was pressed (call \(callId))"
        case .doorbellSent(let m): "-> video_doorbell \(m.event.rawValue) to=\(m.devId) call=\(m.eData)" + detail(m)
        case .doorbellReceived(let m): "<- video_doorbell \(m.event.rawValue) from=\(m.devId) call=\(m.eData)" + detail(m)
        case .dpReport(let devId, let dps): "<- dps from=\(devId) \(DPPrinting.json(dps).jsonString)"
        default: nil
        }
    }

    private static func detail(_ m: VideoDoorbellMessage) -> String {
        (m.uid.map { " uid=\($0)" } ?? "") + (m.reason.map { " reason=\($0)" } ?? "")
    }
}

/// DPs as JSON: `{"149":true,...}` (PROTOCOL.md 8.3's `dps`).
enum DPPrinting {
    static func json(_ dps: [DPId: DPValue]) -> JSONValue {
        .object(Dictionary(uniqueKeysWithValues: dps.map { (DPKey.key($0.key), $0.value.json) }))
    }
}

/// `ipcemu app call --video`'s printing, shared with `app listen --video`: a line a second with
/// the video so far, a summary when the call ends.
enum VideoPrinting {
    static func reporter(app: AppUser, sessionId: String) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                if let stats = await app.videoStats(sessionId: sessionId), stats.framesDecoded > 0 {
                    say("           video: \(stats.summary)")
                }
            }
        }
    }

    static func summary(app: AppUser, sessionId: String) async {
        let stats = await app.videoStats(sessionId: sessionId) ?? VideoStats()
        say("video summary: \(stats.summary)")
        if let report = await app.hevcReport(sessionId: sessionId) { say("hevc summary: \(report.summary)") }
    }
}

/// What `ipcemu app listen` does after an answer or an accept: opens the video (`--video`),
/// hangs up (`--hangup-after`), and prints the video summary when the call ends.
actor ListenFollower {
    let app: AppUser
    let userId: String
    let hangupAfter: Double?
    let video: Bool
    private var reporters: [String: Task<Void, Never>] = [:]

    init(app: AppUser, userId: String, hangupAfter: Double?, video: Bool) {
        self.app = app
        self.userId = userId
        self.hangupAfter = hangupAfter
        self.video = video
    }

    func follow(_ event: AppEvent) async {
        switch event {
        case .sent(let m, _) where m.event == .answer:
            // §3: this app answered a device's call.
            if video { await openVideo { try await self.app.openVideo() } }
            if let hangupAfter {
                Task { [app] in
                    try? await Task.sleep(for: seconds(hangupAfter))
                    try? await app.hangUp()
                }
            }
        case .doorbellReceived(let m) where m.event == .answered && m.uid == userId:
            // 8.2: the device says the call is ours.
            if video { await openVideo { try await self.app.openDoorbellVideo() } }
            if let hangupAfter {
                let callId = m.eData
                Task { [app] in
                    try? await Task.sleep(for: seconds(hangupAfter))
                    try? await app.hangUpDoorbell(callId: callId)
                }
            }
        case .callEnded(let record):
            if let reporter = reporters.removeValue(forKey: record.sessionId) {
                reporter.cancel()
                await VideoPrinting.summary(app: app, sessionId: record.sessionId)
            }
        default:
            break
        }
    }

    private func openVideo(_ open: () async throws -> String) async {
        do {
            let sid = try await open()
            reporters[sid] = VideoPrinting.reporter(app: app, sessionId: sid)
        } catch {
            note("ipcemu app listen: cannot open video: \(error)")
        }
    }

    func stop() {
        for reporter in reporters.values { reporter.cancel() }
        reporters.removeAll()
    }
}

extension AppCommand {
    struct Wake: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Wake a sleeping battery doorbell (PROTOCOL.md 8.4) and print how long it took.",
            discussion: """
                Publishes the 4-byte big-endian CRC32 of the device's localKey (from --profile) on m/w/DEVID, \
                then waits for DP 149 true. Prints `awake: DEVID after MS ms`. Exit 0 awake, \
                \(CallExitCode.noDevice.rawValue) when no DP 149 true came within --wait seconds.
                """
        )

        @Argument(help: "The device id.") var devId: String
        @OptionGroup var connection: AppConnectionOptions
        @Option(help: "Seconds to wait for DP 149 true.") var wait: Double = 10

        func validate() throws {
            guard wait > 0, wait.isFinite else { throw ValidationError("--wait must be a positive number of seconds") }
        }

        func run() async throws {
            let app = try await connection.makeApp()
            try await app.add(connection.address(devId: devId))
            do {
                let woke = try await app.wake(devId: devId, timeout: seconds(wait))
                say(String(format: "awake: %@ after %.0f ms", devId, woke.milliseconds) + (woke.wasAwake ? " (it was awake)" : ""))
                await app.stop()
            } catch {
                note("ipcemu app wake: \(error)")
                await app.stop()
                throw ExitCode(CallExitCode.noDevice.rawValue)
            }
        }
    }

    struct DPs: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "dps",
            abstract: "Set (protocol 5) or query (protocol 31) a device's data points and print what it reports (protocol 4).",
            discussion: """
                Prints one JSON object, {"devId":...,"dps":{"149":true,...}}: every DP the device reported \
                within --wait seconds, each with its last value. With --set or --query it ends once every DP \
                set or queried was reported (and --settle seconds passed for DPs that changed as a result); \
                without either it prints what came within --wait. Values are typed by the DP catalogue: \
                149=true is a bool, 147=30 an integer, 146=1 the string "1"; outside the catalogue true/false \
                is a bool, digits an integer, anything else a string; quote to force a string (149="'yes'"). \
                --until ID=VALUE ends once that value was reported (for example 149=false: the doorbell fell \
                asleep; DP 149 is also read from the retained meta's awake, so a device already asleep counts). Exit 0 when a report came (and every --until value), \(CallExitCode.noDevice.rawValue) when not.
                """
        )

        @Argument(help: "The device id.") var devId: String
        @Argument(help: "DP ids to query with --query (none: every DP).") var ids: [Int] = []
        @OptionGroup var connection: AppConnectionOptions
        @Option(name: .customLong("set"), help: "A DP to set, ID=VALUE (repeatable).") var assignments: [DPAssignment] = []
        @Flag(help: "Ask the device to report the DPs listed after the device id (protocol 31), or all of them.")
        var query = false
        @Option(help: "End once the device reported this DP with this value, ID=VALUE (repeatable; typed as --set); exit \(CallExitCode.noDevice.rawValue) if not within --wait.")
        var until: [DPAssignment] = []
        @Option(help: "Seconds to wait for the reports.") var wait: Double = 5
        @Option(help: "Seconds to keep listening once the DPs awaited came (DPs that change as a result).")
        var settle: Double = 0.3

        func validate() throws {
            guard wait > 0, wait.isFinite else { throw ValidationError("--wait must be a positive number of seconds") }
            guard settle >= 0, settle.isFinite else { throw ValidationError("--settle must be zero or more seconds") }
            if !ids.isEmpty, !query { throw ValidationError("DP ids after the device id need --query") }
            for id in ids where !dpIdRange.contains(id) {
                throw ValidationError("DP id \(id) is outside \(dpIdRange.lowerBound)-\(dpIdRange.upperBound)")
            }
        }

        func run() async throws {
            let app = try await connection.makeApp()
            try await app.add(connection.address(devId: devId))
            let events = await app.events()
            var awaited = Set(assignments.map(\.id))
            if query { awaited.formUnion(ids) }
            let wantsAny = query && ids.isEmpty
            do {
                if !assignments.isEmpty {
                    try await app.setDPs(devId: devId, Dictionary(assignments.map { ($0.id, $0.value) }, uniquingKeysWith: { _, b in b }))
                }
                if query { try await app.queryDPs(devId: devId, ids: ids) }
            } catch {
                note("ipcemu app dps: \(error)")
                await app.stop()
                throw ExitCode(CallExitCode.failed.rawValue)
            }
            let interactive = !assignments.isEmpty || query || !until.isEmpty
            var untilLeft = until
            let devId = self.devId
            // The app's events until --wait passes or the DPs awaited came (plus --settle).
            let (reports, input) = AsyncStream.makeStream(of: [DPId: DPValue].self)
            let pump = Task {
                for await event in events {
                    if case .dpReport(let from, let dps) = event, from == devId { input.yield(dps) }
                }
                input.finish()
            }
            let stopper = Task {
                try? await Task.sleep(for: seconds(wait))
                input.finish()
            }
            var seen: [DPId: DPValue] = [:]
            var settler: Task<Void, Never>?
            // DP 149 may have been reported before this app listened: the retained meta's `awake`
            // says what it is now (PROTOCOL.md 8.4).
            if let wanted = untilLeft.first(where: { $0.id == DataPointCatalogue.awake }),
               let awake = try? await app.awakeState(devId: devId), wanted.value == .bool(awake) {
                untilLeft.removeAll { $0.id == DataPointCatalogue.awake }
                seen[DataPointCatalogue.awake] = .bool(awake)
                if untilLeft.isEmpty, assignments.isEmpty, !query { input.finish() }
            }
            for await dps in reports {
                seen.merge(dps) { _, new in new }
                awaited.subtract(dps.keys)
                untilLeft.removeAll { dps[$0.id] == $0.value }
                if interactive, settler == nil, awaited.isEmpty || wantsAny, untilLeft.isEmpty {
                    let settle = self.settle
                    settler = Task {
                        try? await Task.sleep(for: seconds(settle))
                        input.finish()
                    }
                }
            }
            stopper.cancel()
            settler?.cancel()
            pump.cancel()
            await app.stop()
            say(JSONValue.object(["devId": .string(devId), "dps": DPPrinting.json(seen)]).jsonString)
            if seen.isEmpty {
                note("ipcemu app dps: no report from \(devId) within \(wait) s")
                throw ExitCode(CallExitCode.noDevice.rawValue)
            }
            if !untilLeft.isEmpty {
                note("ipcemu app dps: not reported within \(wait) s: " + untilLeft.map(\.description).joined(separator: ", "))
                throw ExitCode(CallExitCode.noDevice.rawValue)
            }
            if !awaited.isEmpty {
                note("ipcemu app dps: not reported within \(wait) s: " + awaited.sorted().map(String.init).joined(separator: ", "))
            }
        }
    }
}
