import AppSimulator
import ArgumentParser
import CallEngine
import CallRuntime
import DeviceProfile
import Foundation
import IPCWire
import MQTTTransport
import WebRTCLink

extension BenchCommand {
    /// `ipcemu bench media`: video calls one after another against a device in its own process,
    /// so its CPU is measured apart from the app's decoding.
    struct Media: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make video calls and print answer -> first frame, capture-to-decode latency and device CPU per stream.",
            discussion: """
                Starts a private mosquitto and `ipcemu run` (this binary) with --profile answering at once, \
                then makes --calls calls one after another: call, answer, P2P link, --seconds of video decoded \
                and stamp-read by the app simulator, hang up. Device CPU is the device process's user+system \
                time over the streaming window (from /proc), per stream, as a share of one core.
                """
        )

        @Option(help: "Number of calls measured.") var calls: Int = 20
        @Option(help: "Calls made first and not counted (the device's first link loads GStreamer's plugins).")
        var warmup: Int = 1
        @Option(help: "Seconds of video per call.") var seconds: Double = 3
        @Option(help: "Seconds the device lets each call ring before it answers (0: at once, so the app's link is still being prepared at the answer; a person answers after seconds).")
        var ringSeconds: Double = 0
        @Option(help: "Device profile (the main stream's size and rate are used).") var profile: String = "device-profiles/doorbell.yaml"
        @Option(help: "Instead of calls one after another: this many live-view links of the device streaming at once, added one at a time (the CPU curve), then measured together for --seconds.")
        var concurrent: Int?
        @Option(help: "With --concurrent: the stream every link asks for.") var stream: StreamOption = .main
        @Option(help: "With --concurrent: how many of the streams the app decodes and stamp-reads (the others are counted).")
        var decodeSample: Int = 2
        @Option(help: "With --concurrent or --fleet: seconds the device's CPU is measured after each added stream.")
        var stepSeconds: Double = 1
        @Option(help: "Instead: N devices of one fleet (`ipcemu fleet` of --profile, its own process) each in a video call from its own app user, added one at a time (the fleet's CPU curve), then measured together for --seconds; --decode-sample of them decoded.")
        var fleet: Int?
        @Option(help: "With --fleet: the nice value this process's threads (the app side: every receiving link) take once the fleet runs, so that they do not starve the fleet's few threads on the same cores (0: leave them at the fleet's).")
        var appNice: Int32 = 10
        // A/B switches for comparisons (docs/webrtc.md, "First frame, fifth pass"): the app's links
        // as they were before it.
        @Flag(help: ArgumentHelp("The app's links use webrtcbin's regular ICE nomination instead of aggressive nomination (to compare).",
                                 visibility: .hidden))
        var appRegularNomination = false
        @Flag(help: ArgumentHelp("The app's jitter buffers keep GStreamer 1.22's fast-start race (to compare).", visibility: .hidden))
        var appJitterbufferRace = false
        @Flag(help: ArgumentHelp("The app starts preparing each call's link only once the call went out, as before (to compare): with the device answering at once its link is still being built at the answer.",
                                 visibility: .hidden))
        var appLinkAfterCall = false

        /// The app's links as the switches above ask.
        var appLinks: GStreamerAppLinks {
            GStreamerAppLinks(tuning: AppLinkTuning(aggressiveNomination: !appRegularNomination,
                                                    jitterBufferStartsAfterQueuedEvents: !appJitterbufferRace))
        }

        func validate() throws {
            if let concurrent, concurrent < 1 { throw ValidationError("--concurrent must be at least 1") }
            if let fleet, fleet < 1 { throw ValidationError("--fleet must be at least 1") }
            if fleet != nil, concurrent != nil { throw ValidationError("--fleet and --concurrent are two different benches: give one") }
            guard decodeSample >= 0 else { throw ValidationError("--decode-sample must be zero or more") }
            guard (0...19).contains(appNice) else { throw ValidationError("--app-nice must be 0 to 19") }
            guard stepSeconds > 0.1 else { throw ValidationError("--step-seconds must be more than 0.1") }
            guard calls >= 1 else { throw ValidationError("--calls must be at least 1") }
            guard warmup >= 0 else { throw ValidationError("--warmup must be zero or more") }
            guard seconds > 0.5 else { throw ValidationError("--seconds must be more than 0.5") }
            guard ringSeconds >= 0, ringSeconds <= 10 else { throw ValidationError("--ring-seconds must be 0 to 10") }
        }

        func run() async throws {
            if let fleet {
                let bench = FleetVideoBench(devices: fleet, decodedSample: min(decodeSample, fleet), profilePath: profile,
                                            stream: stream.streamType, seconds: seconds, stepSeconds: stepSeconds,
                                            appNice: appNice, appLinks: appLinks)
                if try await !bench.run() { throw ExitCode(1) }
                return
            }
            let p = try loadProfile(profile)
            let devId = p.isTemplate ? try p.instance(index: 0).identity.devId : p.identity.devId
            let broker = try MosquittoBroker()
            defer { broker.stop() }
            let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
            let device = Process()
            device.executableURL = URL(fileURLWithPath: exe)
            device.arguments = ["run", "--profile", profile, "--broker", broker.url, "--answer", "answer:\(ringSeconds)", "--log-level", "warning"]
            if let concurrent {
                device.arguments? += ["--max-live-view", "\(concurrent)", "--live-view-limit", "\(concurrent)"]
            }
            device.standardOutput = FileHandle.nullDevice
            try device.run()
            // One SIGTERM: the device ends its calls and publishes its offline status; a second
            // one during that shutdown makes it exit at once ("second SIGTERM during shutdown").
            var deviceStopped = false
            func stopDevice() {
                guard !deviceStopped else { return }
                deviceStopped = true
                device.terminate()
            }
            defer { if device.isRunning { stopDevice() } }

            // The app's own GStreamer start-up is not the device's first call: load it now.
            GStreamerRuntime.preloadPlugins()
            let app = try AppUser(userId: "bench-user", connection: broker.clientOptions(clientID: "bench-user"),
                                  log: EventLog(minimumLevel: .error), links: appLinks)
            try await app.start()
            let t = p.topics(for: devId)
            try await app.add(DeviceAddress(devId: devId, inTopic: t.in, outTopic: t.out, metaTopic: t.meta,
                                            security: p.security, localKey: p.identity.localKey,
                                            p2pPassword: p.identity.p2pPassword))
            // Wait for the device's retained online status by probing it.
            var online = false
            for _ in 0..<50 where !online {
                online = (try? await app.fetchDeviceCallAbility(devId: devId, timeout: .milliseconds(200))) != nil
            }
            guard online else { throw ValidationError("the device did not come up") }
            if let concurrent {
                guard p.capabilities.liveView else { throw ValidationError("--concurrent needs a profile with liveView: true") }
                let bench = ConcurrentMediaBench(
                    streams: concurrent, decodedSample: min(decodeSample, concurrent), stream: stream.streamType,
                    seconds: seconds, stepSeconds: stepSeconds)
                let ok = try await bench.run(app: app, devId: devId, devicePid: device.processIdentifier)
                await app.stop()
                stopDevice()
                if !ok { throw ExitCode(1) }
                return
            }

            var firstFrame: [Double] = []
            var latencies: [Double] = []
            var cpu: [Double] = []
            var frames = 0, dropped = 0, stampErrors = 0
            var size = ""
            var failures = 0
            var coldFirstFrame: [Double] = []
            var steps = FirstFrameSteps()
            for i in 0..<(calls + warmup) {
                var events = await app.events().makeAsyncIterator()
                // The app's link is built, and its offer made, before the call goes out: the device
                // answers at once here, and a link prepared only while the call rings (as `app call
                // --video` does, and a person's answer after seconds of ringing finds ready) was
                // still being built at the answer (docs/webrtc.md, "First frame, sixth pass"). Only
                // its offer goes out at the answer, as before.
                let sessionId = await app.newCallSessionId()
                if !appLinkAfterCall {
                    try? await app.prepareVideo(sessionId: sessionId, devId: devId)
                    _ = await waitUntil(.seconds(5)) { await app.preparedVideoTimeline(sessionId: sessionId)?.offerMade != nil }
                }
                let ringing = try await app.startCall(devId: devId, timeoutSeconds: 15, sessionId: sessionId)
                if appLinkAfterCall { try? await app.prepareVideo(sessionId: ringing, devId: devId) }
                var answered = false
                while let e = await events.next() {
                    if case .received(let m, _) = e, m.event == .answer { answered = true; break }
                    if case .callEnded = e { break }
                }
                guard answered else { failures += 1; continue }
                let sid = try await app.openVideo()
                let gotFirst = await waitUntil(.seconds(10)) { (await app.videoStats(sessionId: sid)?.framesDecoded ?? 0) > 0 }
                if !gotFirst {
                    failures += 1
                    note("call \(i): no video within 10 s")
                }
                let cpuStart = Self.cpuSeconds(pid: device.processIdentifier)
                let wallStart = ContinuousClock.now
                try? await Task.sleep(for: .milliseconds(Int64(self.seconds * 1000)))
                let cpuEnd = Self.cpuSeconds(pid: device.processIdentifier)
                let wall = Self.ms(ContinuousClock.now - wallStart) / 1000
                try? await app.hangUp()
                while let e = await events.next() { if case .callEnded = e { break } }
                let stats = await app.videoStats(sessionId: sid) ?? VideoStats()
                if i < warmup {
                    if let ms = stats.answerToFirstFrameMs { coldFirstFrame.append(ms) }
                    say(String(format: "warm-up %d: %@", i + 1, stats.summary))
                    continue
                }
                if let ms = stats.answerToFirstFrameMs { firstFrame.append(ms) }
                if let timeline = await app.videoLinkTimeline(sessionId: sid) { steps.add(timeline, stats) }
                latencies += stats.latenciesMs
                frames += stats.framesDecoded
                dropped += stats.framesDropped
                stampErrors += stats.stampErrors
                size = "\(stats.width)x\(stats.height)"
                if let a = cpuStart, let b = cpuEnd, wall > 0 { cpu.append((b - a) / wall * 100) }
                say(String(format: "call %2d: %@", i + 1 - warmup, stats.summary))
                try? await Task.sleep(for: .milliseconds(200))
            }
            await app.stop()
            stopDevice()
            let main = p.capabilities.video?.main
            say("bench media: \(calls) calls, \(size) (profile main \(main.map { "\($0)" } ?? "?")), \(self.seconds) s each, \(failures) failed")
            say("  answer -> first frame:      \(Percentiles(firstFrame).summary)")
            if let cold = coldFirstFrame.first { say(String(format: "  (cold first link, not counted: %.0f ms)", cold)) }
            say("  where the time goes (the app's link, step by step):")
            for line in steps.lines { say(line) }
            say("  capture -> decode latency:  \(Percentiles(latencies).summary)")
            say(String(format: "  device CPU per stream:      mean %.1f%% of one core, max %.1f%%",
                       cpu.isEmpty ? .nan : cpu.reduce(0, +) / Double(cpu.count), cpu.max() ?? .nan))
            say("  frames decoded \(frames), stamp errors \(stampErrors), frames dropped (counter gaps) \(dropped)")
            if failures > 0 { throw ExitCode(1) }
        }

        private func waitUntil(_ timeout: Duration, _ condition: () async -> Bool) async -> Bool {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if await condition() { return true }
                try? await Task.sleep(for: .milliseconds(5))
            }
            return false
        }

        /// User + system CPU seconds of a process, from /proc/PID/stat.
        static func cpuSeconds(pid: Int32) -> Double? {
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = text.lastIndex(of: ")") else { return nil }
            let fields = text[text.index(after: close)...].split(separator: " ")
            // After the command: state is field 3; utime and stime are fields 14 and 15.
            guard fields.count > 13, let utime = Double(fields[11]), let stime = Double(fields[12]) else { return nil }
            return (utime + stime) / Double(sysconf(Int32(_SC_CLK_TCK)))
        }

        /// A process's CPU over a window of `seconds`, as % of one core (nan when unreadable).
        static func cpuShare(pid: Int32, over seconds: Double) async -> Double {
            let start = cpuSeconds(pid: pid)
            let wallStart = ContinuousClock.now
            try? await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
            let end = cpuSeconds(pid: pid)
            let wall = ms(ContinuousClock.now - wallStart) / 1000
            guard let a = start, let b = end, wall > 0 else { return .nan }
            return (b - a) / wall * 100
        }

        /// The 1, 5 and 15 minute load averages, as /proc/loadavg gives them.
        static var loadAverage: String {
            let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
            return text.split(separator: " ").prefix(3).joined(separator: " ")
        }

        static func ms(_ d: Duration) -> Double {
            Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
        }
    }
}
