import AppSimulator
import ArgumentParser
import CallEngine
import CallRuntime
import DeviceProfile
import Foundation
import IPCWire
import MQTTTransport
import WebRTCLink

/// `ipcemu app ...`: the phone app's side, as the SDK plays it.
struct AppCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app",
        abstract: "Play the phone app: probe a device, call it, wait for its calls and doorbell presses, wake it, read and set its DPs.",
        subcommands: [Probe.self, Call.self, Listen.self, Wake.self, DPs.self]
    )
}

/// Options every `ipcemu app` subcommand takes.
struct AppConnectionOptions: ParsableArguments {
    @Option(help: "Broker URL (mqtt://host:port or mqtts://host:port).")
    var broker: String = "mqtt://127.0.0.1:1883"

    @Option(help: "The device's profile: its topics, security mode and keys (default: plain, default topics).")
    var profile: String?

    @Option(help: "The app user id this app is signed in as.")
    var user: String = "ipcemu-app-user"

    @Option(help: "CA file for mqtts (default: the system CAs).")
    var caFile: String?

    func address(devId: String) throws -> DeviceAddress {
        guard let profile else { return DeviceAddress(devId: devId) }
        let p = try loadProfile(profile)
        let t = p.topics(for: devId)
        return DeviceAddress(devId: devId, inTopic: t.in, outTopic: t.out, metaTopic: t.meta, security: p.security,
                             localKey: p.identity.localKey, p2pPassword: p.identity.p2pPassword)
    }

    func makeApp(config: AppEngineConfig? = nil) async throws -> AppUser {
        let options = try connectionOptions(brokerURL: broker, clientID: user, caFile: caFile, certFile: nil, keyFile: nil)
        let app = try AppUser(userId: user, connection: options, config: config)
        do {
            try await app.start(timeout: .seconds(5))
        } catch {
            note("ipcemu app: \(error)")
            throw ExitCode(CallExitCode.noDevice.rawValue)
        }
        return app
    }
}

/// Prints app events as they happen, one line each, with the time since start.
struct EventPrinter {
    let start = ContinuousClock.now

    func print(_ event: AppEvent) {
        let elapsed = ContinuousClock.now - start
        let ms = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        let stamp = String(format: "%+8.3fs", ms / 1000)
        guard let text = Self.describe(event) else { return }
        say("\(stamp) \(text)")
    }

    static func describe(_ event: AppEvent) -> String? {
        switch event {
        case .sent(let m, let devId): "-> \(m.event.rawValue) to=\(devId) session=\(m.sessionId)" + reason(m)
        case .received(let m, let devId): "<- \(m.event.rawValue) from=\(devId) session=\(m.sessionId)" + reason(m)
        case .incomingCall(let s, let devId): "ringing: \(devId) is calling (session \(s))"
        case .deviceRinging: nil
        case .callEnded(let r):
            "call ended: \(r.outcome.rawValue)" + (r.reason.map { " reason=\($0.rawValue)" } ?? "")
                + (r.sdkError.map { " sdkError=\($0)" } ?? "")
        case .refused(let why): "refused: \(why)"
        case .connection(let up, let detail): up ? nil : "broker: \(detail)"
        case .signal(let s, let devId): "<- 302 \(s.type.rawValue) from=\(devId)"
        case .doorbellPressed, .doorbellRinging, .doorbellSent, .doorbellReceived, .dpReport:
            describeDoorbell(event)  // AppDoorbellCommands.swift
        }
    }

    private static func reason(_ m: CallMessage) -> String { m.reason.map { " reason=\($0)" } ?? "" }
}

extension AppCommand {
    struct Probe: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Ask a device for its call abilities (fetchDeviceCallAbilityByDevId).",
            discussion: "Prints the answer as JSON. Exits 0 if the device supports two-way video calls, 1 if not, 6 if no answer came."
        )

        @Argument(help: "The device id.") var devId: String
        @OptionGroup var connection: AppConnectionOptions
        @Option(help: "Seconds to wait for the answer.") var wait: Double = 3

        func run() async throws {
            let app = try await connection.makeApp()
            defer { Task { await app.stop() } }
            try await app.add(connection.address(devId: devId))
            do {
                let answer = try await app.fetchDeviceCallAbility(devId: devId, timeout: seconds(wait))
                say(answer.envelopeData.jsonString)
                await app.stop()
                if !answer.support { throw ExitCode(1) }
            } catch let error as AppError {
                note("ipcemu app probe: \(error)")
                await app.stop()
                throw ExitCode(CallExitCode.noDevice.rawValue)
            }
        }
    }

    struct Call: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Call a device (startCall) and print each call event.",
            discussion: "Exit codes: " + CallExitCode.allCases.map { "\($0.rawValue) \($0.meaning)" }.joined(separator: ", ") + "."
        )

        @Argument(help: "The device id.") var devId: String
        @OptionGroup var connection: AppConnectionOptions
        @Option(help: "Seconds the call may ring (its deadline).") var timeout: Int64 = 30
        @Option(help: "Call type: 1 one-to-one, 2 one-to-more, 3 one-to-more special.") var callType: CallTypeOption = .oneToOne
        @Option(help: "Channel type: 0 audio, 1 video, 2 both.") var channelType: ChannelTypeOption = .audioVideo
        @Option(help: "Hang up this many seconds after the answer (default: stay until the device ends the call or Ctrl-C).")
        var hangupAfter: Double?
        @Option(help: "Heartbeat interval in seconds.") var heartbeatInterval: Double = 10
        @Option(help: "Seconds without the device's heartbeat before the app stops the call with heartbeat_timeout (default: three heartbeat intervals).")
        var heartbeatTimeout: Double?
        @Flag(help: "Once answered, open the P2P link and receive, decode and measure the device's video.")
        var video = false
        @Option(help: "Which stream to ask for with --video.") var stream: StreamOption = .main
        @Flag(help: "Also send this app's own test video (two-way; implies --video).") var sendVideo = false
        @Option(help: "Write every decoded frame's luma plane as PGM into this folder (implies --video).")
        var saveFrames: String?
        @Option(help: "With --video: this many seconds after the link opens, switch it to the other stream (a 302 resolution message), and back after as many again; prints the new size and how long the switch took (implies --video).")
        var switchAfter: Double?
        @Flag(help: "Take the video as H.265 in fMP4 over the fmp4Stream data channel (PROTOCOL.md 7; the device's profile must list H265): the offer has audio and the data channel, no RTP video (implies --video).")
        var hevc = false
        @Option(name: .customLong("ice-server"), help: ArgumentHelp(
            "A STUN or TURN server the offer's token names and this app's link uses (repeatable; PROTOCOL.md 4, 9.4): stun:host[:port] or turn:user:password@host[:port][?transport=udp|tcp] (also turns:).",
            valueName: "url"))
        var iceServers: [ICEServerArgument] = []
        @Flag(help: "With --video: relay-only ICE on the app's side (webrtcbin's ice-transport-policy relay): the link comes up only through a TURN server of --ice-server.")
        var relayOnly = false

        func validate() throws {
            guard timeout > 0, timeout <= 86_400 else { throw ValidationError("--timeout must be 1 to 86400 seconds; got \(timeout)") }
            if let h = hangupAfter, !(h >= 0 && h.isFinite) { throw ValidationError("--hangup-after must be zero or more seconds") }
            guard heartbeatInterval > 0, heartbeatInterval <= 86_400 else { throw ValidationError("--heartbeat-interval must be more than 0 and at most 86400 seconds") }
            if let t = heartbeatTimeout, !(t > 0 && t <= 86_400) { throw ValidationError("--heartbeat-timeout must be more than 0 and at most 86400 seconds") }
            if let s = switchAfter, !(s > 0 && s.isFinite) { throw ValidationError("--switch-after must be a positive number of seconds") }
            if hevc, sendVideo { throw ValidationError("--hevc and --send-video do not go together (the HEVC offer has no RTP video)") }
            let ice = try iceConfiguration()
            if relayOnly, !ice.hasTURNServer { throw ValidationError("--relay-only needs a TURN server: --ice-server turn:user:password@host:port") }
        }

        /// `--ice-server` and `--relay-only` as the app's link takes them.
        func iceConfiguration() throws -> AppICEConfiguration {
            var servers: [IPCWire.ICEServer] = []
            for argument in iceServers {
                do {
                    servers.append(try AppICEConfiguration.server(parsing: argument.text))
                } catch {
                    throw ValidationError("--ice-server \(error)")
                }
            }
            return AppICEConfiguration(servers: servers, relayOnly: relayOnly)
        }

        var wantsVideo: Bool { video || sendVideo || saveFrames != nil || switchAfter != nil || hevc }

        func run() async throws {
            let hbMs = Int64((heartbeatInterval * 1000).rounded())
            let timeoutMs = heartbeatTimeout.map { Int64(($0 * 1000).rounded()) } ?? hbMs * 3
            let ice = try iceConfiguration()
            // GStreamer's plugins and the DTLS certificate load while the broker connects (a few
            // hundred ms in a fresh process), off the answer -> first frame path (docs/webrtc.md).
            if wantsVideo { DispatchQueue.global(qos: .userInitiated).async { GStreamerRuntime.preloadPlugins() } }
            let sendFormat = sendVideo ? VideoFormat(width: 640, height: 360, fps: 15) : nil
            let app = try await connection.makeApp(config: AppEngineConfig(
                userId: connection.user, heartbeatIntervalMs: hbMs, heartbeatTimeoutMs: timeoutMs))
            let address = try connection.address(devId: devId)
            try await app.add(address)
            let events = await app.events()
            let printer = EventPrinter()
            let extra = CallExtra(channelType: channelType.channelType.rawValue)
            do {
                let sessionId = try await app.startCall(devId: devId, timeoutSeconds: timeout,
                                                        callType: callType.callType, extra: extra)
                // While it rings, the link is built and its offer made; the answer only sends it.
                if wantsVideo {
                    try await app.prepareVideo(sessionId: sessionId, devId: devId, sendVideo: sendFormat,
                                               saveFramesTo: saveFrames, hevc: hevc, ice: ice)
                }
            } catch {
                note("ipcemu app call: \(error)")
                await app.stop()
                throw ExitCode(CallExitCode.failed.rawValue)
            }
            let hangupAfter = self.hangupAfter
            let interrupt = Task {
                _ = await waitForTerminationSignal()
                try? await app.hangUp()
                try? await app.cancel()
            }
            var heardFromDevice = false
            var answered = false
            var outcome: CallRecord?
            var videoReporter: Task<Void, Never>?
            var videoSession: String?
            for await event in events {
                printer.print(event)
                switch event {
                case .received(let m, _):
                    heardFromDevice = true
                    if m.event == .answer, !answered {
                        answered = true
                        if wantsVideo {
                            do {
                                let sid = try await app.openVideo(
                                    streamType: stream.streamType, sendVideo: sendFormat, saveFramesTo: saveFrames,
                                    hevc: hevc, ice: ice)
                                videoSession = sid
                                if let steps = await app.videoLinkTimeline(sessionId: sid) { say(Self.preparation(steps)) }
                                if let switchAfter {
                                    let first = stream.other.streamType
                                    Task { await Self.switchStreams(app: app, sessionId: sid, devId: devId, first: first, every: switchAfter) }
                                }
                                videoReporter = Task {
                                    var pairShown: ICECandidatePair?
                                    while !Task.isCancelled {
                                        try? await Task.sleep(for: .seconds(1))
                                        // The path the media takes (a relay local candidate: through TURN).
                                        if let pair = await app.videoLinkCandidatePair(sessionId: sid), pair != pairShown {
                                            pairShown = pair
                                            say("           ice: selected pair \(pair)")
                                        }
                                        if let stats = await app.videoStats(sessionId: sid), stats.framesDecoded > 0 {
                                            say("           video: \(stats.summary)")
                                        }
                                    }
                                }
                            } catch {
                                note("ipcemu app call: cannot open video: \(error)")
                            }
                        }
                        if let hangupAfter {
                            Task {
                                try? await Task.sleep(for: seconds(hangupAfter))
                                try? await app.hangUp()
                            }
                        }
                    }
                case .callEnded(let record):
                    outcome = record
                default:
                    break
                }
                if outcome != nil { break }
            }
            interrupt.cancel()
            videoReporter?.cancel()
            if wantsVideo, !answered, let outcome {
                say("           video: the link prepared while ringing is closed (call \(outcome.outcome.rawValue))")
            }
            if let videoSession {
                let stats = await app.videoStats(sessionId: videoSession) ?? VideoStats()
                say("video summary: \(stats.summary)")
                if let steps = await app.videoLinkTimeline(sessionId: videoSession), let line = Self.steps(steps, stats) {
                    say(line)
                }
                if let report = await app.hevcReport(sessionId: videoSession) { say("hevc summary: \(report.summary)") }
            }
            await app.stop()
            let code = Self.exitCode(outcome, answered: answered, heardFromDevice: heardFromDevice)
            note("ipcemu app call: \(code.meaning)")
            if code != .answered { throw ExitCode(code.rawValue) }
        }

        /// Whether the link was ready when the answer came (prepared while the call rang).
        static func preparation(_ steps: LinkTimeline) -> String {
            if steps.preparedBeforeAnswer, let made = steps.offerMade, let answer = steps.callAnswered {
                return String(format: "           video: link prepared while ringing (offer ready %.0f ms before the answer)",
                              answer.timeIntervalSince(made) * 1000)
            }
            return "           video: link not ready at the answer (its offer was not made yet)"
        }

        /// Where answer -> first frame went: the offer out, the device's 302 answer, ICE+DTLS, the frame.
        static func steps(_ steps: LinkTimeline, _ stats: VideoStats) -> String? {
            guard let answer = steps.callAnswered else { return nil }
            func ms(_ date: Date?) -> String { date.map { String(format: "%.0f ms", $0.timeIntervalSince(answer) * 1000) } ?? "-" }
            return "video steps after the answer: offer sent \(ms(steps.offerSent)), device's 302 answer \(ms(steps.answerReceived)),"
                + " connected \(ms(steps.connected)), first frame \(ms(stats.firstFrameAt))"
        }

        /// `--switch-after`: to `first`, then back, each `every` seconds apart; reports the size the
        /// app decodes next and the time from the message to its first frame.
        static func switchStreams(app: AppUser, sessionId: String, devId: String, first: StreamType, every: Double) async {
            // "After S seconds of video": the clock starts at the first decoded frame (a link that
            // is slow to come up must not get the message before it exists: the device drops a
            // `resolution` for a session without a link, PROTOCOL.md 4).
            let videoDeadline = Date().addingTimeInterval(30)
            while Date() < videoDeadline, (await app.videoStats(sessionId: sessionId)?.framesDecoded ?? 0) == 0 {
                try? await Task.sleep(for: .milliseconds(20))
            }
            for target in [first, first == .main ? StreamType.sub : .main] {
                try? await Task.sleep(for: seconds(every))
                guard let before = await app.videoStats(sessionId: sessionId) else { return }
                let sentAt = Date()
                do {
                    try await app.switchStream(sessionId: sessionId, devId: devId, to: target)
                } catch {
                    note("ipcemu app call: cannot send resolution: \(error)")
                    return
                }
                say("           -> 302 resolution \(target.rawValue) (\(target == .main ? "main" : "sub"))")
                let deadline = Date().addingTimeInterval(5)
                while Date() < deadline {
                    if let stats = await app.videoStats(sessionId: sessionId), stats.sizeChanges.count > before.sizeChanges.count,
                        let change = stats.sizeChanges.last
                    {
                        say(String(format: "           video: switched to %dx%d in %.0f ms (first frame's stamp %@)", change.width,
                                   change.height, change.at.timeIntervalSince(sentAt) * 1000, change.stampRead ? "read" : "unreadable"))
                        break
                    }
                    try? await Task.sleep(for: .milliseconds(10))
                }
                if Date() >= deadline { say("           video: no size change within 5 s of the resolution message") }
            }
        }

        static func exitCode(_ record: CallRecord?, answered: Bool, heardFromDevice: Bool) -> CallExitCode {
            if answered || record?.answeredAt != nil { return .answered }
            guard let record else { return .failed }
            if !heardFromDevice { return .noDevice }
            switch record.sdkError {
            case .rejected?, .rejectedByOthers?: return .rejected
            case .peerBusy?: return .busy
            case .notAnswered?, .timeout?: return .notAnswered
            default: return .failed
            }
        }
    }

    struct Listen: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Wait for calls from devices and doorbell presses, and answer them as told.",
            discussion: """
                Listens on every device's out topic (smart/device/out/+) until SIGINT or SIGTERM. A press of a \
                screen_ipc device is a §3 call; a press of an ac_doorbell or doorbell device is a protocol 43 \
                press answered with video_doorbell messages (PROTOCOL.md 8). --answer: auto or accept answers \
                either (answer / accept), reject or stop declines (reject / stop), busy replies busy (a doorbell \
                gets stop), ignore lets it ring, manual rings only.
                """
        )

        @OptionGroup var connection: AppConnectionOptions
        @Option(help: "What to do when called or when a doorbell rings: auto or accept, reject or stop, busy, ignore, manual (ring only).")
        var answer: ListenAnswer = .auto
        @Option(help: "Seconds between ringing and answering (auto) or rejecting (reject).") var answerDelay: Double = 0
        @Option(help: "Hang up this many seconds after answering (a doorbell: after the device's answered).") var hangupAfter: Double?
        @Option(help: "Exit after this many calls have ended.") var calls: Int?
        @Option(help: "Heartbeat interval in seconds once a call is answered or a doorbell accepted.")
        var heartbeatInterval: Double = 10
        @Option(help: "Seconds a doorbell rings on the device (its doorbell.ringTimeout); the app gives up 2 s after.")
        var ringTimeout: Double = 25
        @Flag(help: "Once answered or accepted, open the P2P link and receive, decode and measure the device's video (as app call --video).")
        var video = false

        func validate() throws {
            guard heartbeatInterval > 0, heartbeatInterval <= 86_400 else { throw ValidationError("--heartbeat-interval must be more than 0 and at most 86400 seconds") }
            guard ringTimeout > 0, ringTimeout <= 86_400 else { throw ValidationError("--ring-timeout must be more than 0 and at most 86400 seconds") }
            if let h = hangupAfter, !(h >= 0 && h.isFinite) { throw ValidationError("--hangup-after must be zero or more seconds") }
            guard answerDelay >= 0, answerDelay.isFinite else { throw ValidationError("--answer-delay must be zero or more seconds") }
            if let calls, calls < 1 { throw ValidationError("--calls must be at least 1") }
        }

        var policy: AnswerPolicy { answer.policy(delaySeconds: answerDelay) }

        func run() async throws {
            let hbMs = Int64((heartbeatInterval * 1000).rounded())
            let app = try await connection.makeApp(config: AppEngineConfig(
                userId: connection.user, heartbeatIntervalMs: hbMs, heartbeatTimeoutMs: hbMs * 3, incomingPolicy: policy))
            try await app.configureDoorbells(AppDoorbellConfig(
                userId: connection.user, heartbeatIntervalMs: hbMs, heartbeatTimeoutMs: hbMs * 3,
                ringTimeoutMs: Int64((ringTimeout * 1000).rounded()), policy: policy))
            let template = try connection.profile.map(loadProfile)
            try await app.listenToAllDevices { devId in
                guard let p = template else { return DeviceAddress(devId: devId) }
                let t = p.topics(for: devId)
                return DeviceAddress(devId: devId, inTopic: t.in, outTopic: t.out, metaTopic: t.meta, security: p.security,
                                     localKey: p.identity.localKey, p2pPassword: p.identity.p2pPassword)
            }
            note("ipcemu app listen: \(connection.user) is waiting for calls on \(connection.broker) (Ctrl-C to stop)")
            let events = await app.events()
            let printer = EventPrinter()
            let follower = ListenFollower(app: app, userId: connection.user, hangupAfter: hangupAfter, video: video)
            let limit = calls
            let stopper = Task {
                _ = await waitForTerminationSignal()
                await app.stop()
            }
            var ended = 0
            for await event in events {
                printer.print(event)
                await follower.follow(event)
                if case .callEnded = event {
                    ended += 1
                    if let limit, ended >= limit { break }
                }
            }
            stopper.cancel()
            await follower.stop()
            await app.stop()
        }
    }
}

/// One `--ice-server` value as typed; `Call.validate()` parses it (`AppICEConfiguration.server(parsing:)`)
/// so that a bad one is refused with the reason.
struct ICEServerArgument: ExpressibleByArgument {
    let text: String
    init?(argument: String) { text = argument }
}
