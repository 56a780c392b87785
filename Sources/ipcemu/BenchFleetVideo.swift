import AppSimulator
import Camera
import ArgumentParser
import CallEngine
import CallRuntime
import DeviceProfile
import Emulator
import Foundation
import IPCWire
import MQTTTransport
import WebRTCLink

/// `ipcemu bench media --fleet N` (issue 24 item 5): N devices of one fleet (`ipcemu fleet` in its
/// own process, one template, so one camera configuration) each in a video call at once, every
/// call from its own app user. The fleet process holds one capture and one encoder for them all
/// (DESIGN.md "Scale"), fanned out to every device's link. Calls are added one at a time with the
/// fleet's CPU measured after each (the per-link cost), then all stream for --seconds. The app
/// decodes a sample of the streams (stamps read, counter gaps counted; two sampled streams of
/// different devices showing the same stamps prove they come from one encoder) and only counts
/// the others at the RTP level (`CountedCheck`: access units, key frames, sequence gaps).
struct FleetVideoBench {
    var devices: Int
    var decodedSample: Int
    var profilePath: String
    var stream: StreamType
    var seconds: Double
    var stepSeconds: Double
    /// The nice value the bench's own threads (the app side) take once the fleet runs (0: none).
    var appNice: Int32 = 10
    /// The app users' links (`bench media`'s A/B switches).
    var appLinks = GStreamerAppLinks()

    struct Call {
        var app: AppUser
        var devId: String
        var sessionId: String
        var decodes: Bool
        /// When its call was answered and added (to say how many were up at a gap).
        var addedAt = Date()
    }

    func run() async throws -> Bool {
        let template = try loadProfile(profilePath)
        guard template.capabilities.video != nil else { throw ValidationError("--fleet needs a profile with video") }
        let plan = try FleetPlan(groups: [FleetPlan.Group(profile: template, count: devices)])
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let fleet = FleetProcess(arguments: [
            "fleet", "--profile", "\(profilePath):\(devices)", "--broker", broker.url, "--answer", "answer:0", "--json",
            // Its /metrics: the video fan-out's counts (frames lost inside the device).
            "--control", "127.0.0.1:0",
        ])
        let spawned = ContinuousClock.now
        try fleet.start()
        defer { fleet.kill() }
        guard let online = await fleet.waitForOnline(timeout: .seconds(120)), online.online == devices else {
            throw ValidationError("the fleet did not bring \(devices) devices online within 120 s; its output:\n\(fleet.failureReport)")
        }
        let pid = fleet.process.processIdentifier
        let onlineSeconds = BenchCommand.Media.ms(ContinuousClock.now - spawned) / 1000
        let controlURL = await Self.controlURL(of: fleet)
        if controlURL == nil { note("the fleet's control URL was not printed: no fan-out counts") }
        say("bench media --fleet \(devices): fleet pid \(pid) online \(String(format: "%.1f", onlineSeconds)) s after spawn; load average \(BenchCommand.Media.loadAverage)")

        // The app side yields to the device: the fleet was spawned at nice 0 and keeps it, while
        // every thread of this process (and those it makes later, which inherit it) takes
        // `appNice`. Both are in one session (one kernel autogroup), so without it the app's ~10
        // threads per link (webrtcbin's receive path) outnumber the fleet's few busy ones (its
        // delivery lanes, the encoder) and starve them: at 200 links the lanes fell behind and the
        // links skipped to key frames. What the device side costs is measured as if the app side
        // were on another machine, as far as one machine allows; the app side still has to keep
        // up (the fps and counter gaps below are what it received).
        let niced = Self.renice(appNice)
        if appNice != 0 { say("  the app side's \(niced) threads at nice \(appNice) (the fleet at 0)") }

        // The app side: one user per device (an app user has one call at a time), on one MQTT loop.
        GStreamerRuntime.preloadPlugins()
        let loop = try MQTTEventLoop(threads: 2, name: "bench-apps")
        defer { loop.shutdown() }
        var apps: [(AppUser, String)] = []
        for position in 0..<devices {
            let p = try plan.profile(at: position)
            let userId = "bench-user-\(position)"
            let app = try AppUser(userId: userId, connection: broker.clientOptions(clientID: userId), eventLoop: loop,
                                  log: EventLog(minimumLevel: .error), links: appLinks)
            try await app.start(timeout: .seconds(20))
            let t = p.resolvedTopics
            try await app.add(DeviceAddress(devId: p.identity.devId, inTopic: t.in, outTopic: t.out, metaTopic: t.meta,
                                            security: p.security, localKey: p.identity.localKey,
                                            p2pPassword: p.identity.p2pPassword))
            apps.append((app, p.identity.devId))
        }

        try? await Task.sleep(for: .seconds(1))
        let baseline = await BenchCommand.Media.cpuShare(pid: pid, over: stepSeconds)
        say(String(format: "  0 calls: fleet CPU %5.1f%% of one core", baseline))
        var calls: [Call] = []
        var curve: [(Int, Double)] = [(0, baseline)]
        var firstFrameMs: [Double] = []
        var failures = 0
        for (k, (app, devId)) in apps.enumerated() {
            let decodes = k < decodedSample
            guard let sid = await call(app: app, devId: devId, decodes: decodes) else {
                failures += 1
                note("device \(devId): the call was not answered")
                continue
            }
            calls.append(Call(app: app, devId: devId, sessionId: sid, decodes: decodes))
            let first = await ConcurrentMediaBench.firstFrame(app: app, sessionId: sid, decodes: decodes)
            if let first { firstFrameMs.append(first) } else {
                failures += 1
                note("device \(devId): no video within 10 s")
            }
            let cpu = await BenchCommand.Media.cpuShare(pid: pid, over: stepSeconds)
            curve.append((calls.count, cpu))
            say(String(format: "  %d calls: fleet CPU %5.1f%% of one core (answer -> first frame %@); load average %@",
                       calls.count, cpu, first.map { String(format: "%.0f ms", $0) } ?? "-", BenchCommand.Media.loadAverage))
        }

        // Every call streaming at once for `seconds`.
        var before: [String: Int] = [:]
        var packetsBefore = 0, bytesBefore = 0
        let nominalFPS = stream == .main ? template.capabilities.video?.main.fps ?? 30 : template.capabilities.video?.sub.fps ?? 15
        var countedBefore = CountedCheck(fps: nominalFPS)
        for c in calls {
            before[c.sessionId] = await Self.frames(c)
            let stats = await c.app.videoLinkStatistics(sessionId: c.sessionId)?.stats
            packetsBefore += stats?.videoPacketsReceived ?? 0
            bytesBefore += stats?.rtpBytesReceived ?? 0
            if !c.decodes, let stats { countedBefore.add(stats) }
        }
        let fanOutBefore = await FleetFanOutScrape.read(controlURL: controlURL)
        let appCPUStart = BenchCommand.Media.cpuSeconds(pid: getpid())
        let cpuAll = await BenchCommand.Media.cpuShare(pid: pid, over: seconds)
        let appCPU = (BenchCommand.Media.cpuSeconds(pid: getpid()) ?? .nan) - (appCPUStart ?? .nan)
        let fanOutAfter = await FleetFanOutScrape.read(controlURL: controlURL)
        var fps: [Double] = []
        var gapMs = 0
        var dropped = 0, stampErrors = 0, decodedFrames = 0
        var sampleStamps: [(String, Set<VideoStats.Stamp>)] = []
        var sampleGaps: [MissingFrames] = []
        var gapLines: [String] = []
        var packetsAfter = 0, bytesAfter = 0
        var countedAfter = CountedCheck(fps: nominalFPS)
        for c in calls {
            fps.append(Double(await Self.frames(c) - (before[c.sessionId] ?? 0)) / seconds)
            if let (stats, _) = await c.app.videoLinkStatistics(sessionId: c.sessionId) {
                packetsAfter += stats.videoPacketsReceived
                bytesAfter += stats.rtpBytesReceived
                if !c.decodes {
                    gapMs = max(gapMs, stats.longestAccessUnitGapMs)
                    countedAfter.add(stats)
                }
            }
            if c.decodes, let stats = await c.app.videoStats(sessionId: c.sessionId) {
                dropped += stats.framesDropped
                stampErrors += stats.stampErrors
                decodedFrames += stats.framesDecoded
                sampleStamps.append((c.devId, Set(stats.stamps)))
                sampleGaps.append(Self.missingFrames(stats.stamps))
                let restarts = await c.app.videoLinkStatistics(sessionId: c.sessionId)?.stats.stalledReceiverRestarts ?? 0
                gapLines += Self.gapLines(c, stats, calls: calls, restarts: restarts)
            }
        }
        let loadAfter = BenchCommand.Media.loadAverage
        for c in calls {
            try? await c.app.hangUp()
            await c.app.closeVideo(sessionId: c.sessionId)
        }
        for (app, _) in apps { await app.stop() }
        fleet.signal(SIGTERM)
        _ = await fleet.waitForExit(timeout: .seconds(20))

        let sortedFPS = fps.sorted()
        let slope = ConcurrentMediaBench.slope(curve.filter { $0.0 >= 1 })
        say("bench media --fleet \(devices): \(calls.count) calls up, \(stream == .main ? "main" : "sub") stream, "
            + "\(min(decodedSample, calls.count)) decoded, \(failures) failed")
        say(String(format: "  all %d streaming for %.0f s: fleet CPU %.1f%% of one core, the bench's app side %.1f%% (load average %@)",
                   calls.count, seconds, cpuAll, appCPU / seconds * 100, loadAfter))
        say(String(format: "  fleet CPU per added link: %.2f%% of one core (least squares over 1 -> %d calls); first call %.1f%% over idle",
                   slope, calls.count, (curve.count > 1 ? curve[1].1 : baseline) - baseline))
        say(String(format: "  per-stream fps: min %.1f, median %.1f, max %.1f", sortedFPS.first ?? 0,
                   sortedFPS.isEmpty ? 0 : sortedFPS[sortedFPS.count / 2], sortedFPS.last ?? 0))
        let streams = Double(max(1, calls.count))
        say(String(format: "  the app side received %.0f video packets/s per stream, %.0f kbit/s of RTP per stream (%.0f packets/s in all)",
                   Double(packetsAfter - packetsBefore) / seconds / streams,
                   Double(bytesAfter - bytesBefore) * 8 / 1000 / seconds / streams, Double(packetsAfter - packetsBefore) / seconds))
        if let fanOutBefore, let fanOutAfter {
            say("  the fleet's video fan-out while all streamed: " + fanOutAfter.since(fanOutBefore).summary(links: calls.count))
            say("  the fleet's video fan-out over the whole run: " + fanOutAfter.summary(links: calls.count))
        } else {
            say("  the fleet's video fan-out: not read (its /metrics did not answer)")
        }
        say("  longest gap between two frames of a counted stream (whole run): \(gapMs) ms")
        say("  counted streams (\(countedAfter.streams), not decoded): " + countedAfter.since(countedBefore).summary)
        say("  decoded sample: \(decodedFrames) frames, \(stampErrors) stamp errors, \(dropped) frames dropped (counter gaps)")
        for line in gapLines { say("    " + line) }
        say("  one encoder for every device: " + Self.sharedStampsLine(sampleStamps))
        if sampleGaps.count >= 2 {
            let (all, everywhere, alone) = MissingFrames.attribute(sampleGaps)
            say("  missing frames in the sampled streams' first stamps: \(all), of which \(everywhere) missing from every "
                + "sampled stream up at the time (lost before the fan-out: capture or encoder), \(alone) when only one sampled "
                + "stream was up (not told apart), \(all - everywhere - alone) from some (a link or the app)")
        }
        say("  answer -> first frame:      \(Percentiles(firstFrameMs).summary)")
        say("  CPU curve (calls: % of one core): " + curve.map { String(format: "%d: %.1f", $0.0, $0.1) }.joined(separator: ", "))
        let slowest = sortedFPS.first ?? 0
        return failures == 0 && dropped == 0 && stampErrors == 0 && slowest >= 27
    }

    /// What the counted streams (those outside the decoded sample) check, summed: the RTP level
    /// only (no jitter buffer, depayloader or decoder): access units (the marker bit ends one) and
    /// the video's RTP sequence numbers.
    struct CountedCheck {
        var streams = 0
        var accessUnits = 0
        var keyFrames = 0
        var packets = 0
        var missing = 0
        var gaps = 0
        var late = 0
        /// The streams' RTP timestamp spans, summed (90 kHz ticks).
        var timestampSpan = 0
        /// The stream's nominal rate (the profile's), for the frames the timestamps say were sent.
        var fps = 30

        mutating func add(_ stats: LinkStatistics) {
            streams += 1
            accessUnits += stats.videoAccessUnitsReceived
            keyFrames += stats.videoKeyFramesReceived
            packets += stats.videoPacketsReceived
            missing += stats.videoPacketsMissing
            gaps += stats.videoSequenceGaps
            late += stats.videoPacketsLate
            timestampSpan += stats.videoTimestampSpan
        }

        func since(_ earlier: CountedCheck) -> CountedCheck {
            CountedCheck(streams: streams, accessUnits: accessUnits - earlier.accessUnits, keyFrames: keyFrames - earlier.keyFrames,
                         packets: packets - earlier.packets, missing: missing - earlier.missing, gaps: gaps - earlier.gaps,
                         late: late - earlier.late, timestampSpan: timestampSpan - earlier.timestampSpan, fps: fps)
        }

        /// Frames the RTP timestamps say were sent (each step of 1/fps is a frame) and were not
        /// counted: frames the device skipped (a lane behind waits for a key frame) or lost whole.
        var framesSkipped: Int {
            max(0, Int((Double(timestampSpan) * Double(fps) / 90_000).rounded()) - accessUnits)
        }

        var summary: String {
            "checked at the RTP level only, no jitter buffer, depayloader or decoder: \(accessUnits) access units "
                + "(frames: the marker bit ends one; \(keyFrames) key frames), \(packets) video packets, "
                + "\(missing) packets missing by RTP sequence number in \(gaps) gaps, \(late) late (reordered or repeated); "
                + "\(framesSkipped) frames skipped by RTP timestamp (the timestamps advanced \(timestampSpan / 90) ms at \(fps) fps) "
                + "while all streamed"
        }
    }

    /// The fleet's control API base URL (http://HOST:PORT), from the note it prints once served.
    static func controlURL(of fleet: FleetProcess) async -> String? {
        let prefix = "control API and console at "
        let notes = await fleet.waitForNotes(prefix: prefix, containing: "metrics", count: 1, timeout: .seconds(20))
        guard let message = notes.first, let start = message.range(of: prefix)?.upperBound else { return nil }
        let rest = message[start...]
        guard let end = rest.firstIndex(of: " ") else { return nil }
        var url = String(rest[..<end])
        if url.hasSuffix("/") { url.removeLast() }
        return url
    }

    /// Sets the nice value of every thread of this process (Linux: a nice value is per thread, and
    /// a new thread takes its creator's). Returns how many threads took it.
    static func renice(_ value: Int32) -> Int {
        guard value != 0, let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return 0 }
        return tasks.compactMap { id_t($0) }.filter { setpriority(__priority_which_t(PRIO_PROCESS.rawValue), $0, value) == 0 }.count
    }

    /// Calls the device, waits for its answer and opens the video; the session id, or nil.
    private func call(app: AppUser, devId: String, decodes: Bool) async -> String? {
        var events = await app.events().makeAsyncIterator()
        guard (try? await app.startCall(devId: devId, timeoutSeconds: 30)) != nil else { return nil }
        var answered = false
        while let e = await events.next() {
            if case .received(let m, _) = e, m.event == .answer { answered = true; break }
            if case .callEnded = e { break }
        }
        guard answered else { return nil }
        return try? await app.openVideo(streamType: stream, decodes: decodes)
    }

    /// Frames so far of one stream (decoded, or depayloaded access units).
    private static func frames(_ c: Call) async -> Int {
        if c.decodes { return await c.app.videoStats(sessionId: c.sessionId)?.framesDecoded ?? 0 }
        return await c.app.videoLinkStatistics(sessionId: c.sessionId)?.stats.videoAccessUnitsReceived ?? 0
    }

    /// Where a decoded stream's counter gaps were: the frame, the time after its first frame, and
    /// how many calls were up then (a gap at a stream's start, or when another call joined).
    static func gapLines(_ c: Call, _ stats: VideoStats, calls: [Call], restarts: Int) -> [String] {
        guard !stats.gaps.isEmpty || restarts > 0 else { return [] }
        var lines = ["\(c.devId): \(stats.framesDropped) dropped in \(stats.framesDecoded) decoded; receive paths restarted \(restarts)x"]
        for gap in stats.gaps {
            let after = stats.firstFrameAt.map { gap.at.timeIntervalSince($0) } ?? 0
            let up = calls.filter { $0.addedAt <= gap.at }.count
            let last = calls.filter { $0.addedAt <= gap.at }.map(\.addedAt).max().map { gap.at.timeIntervalSince($0) } ?? 0
            lines.append(String(format: "  gap at decoded frame %d (%.2f s after its first): counter %d -> %d, %d missing; "
                                + "%d calls up, the last added %.2f s before", gap.frame, after, Int(gap.counterBefore),
                                Int(gap.counterAfter), gap.missing, up, last))
        }
        return lines
    }

    /// The frames a stream's stamps skip over, each as its counter and the 50 s window of its
    /// estimated capture time (the counter wraps after 4096 frames), so that two streams' losses
    /// can be compared; and the capture times the stamps span (a frame missing before a stream
    /// started is not missing from it).
    struct MissingFrames {
        var frames: [Int64: Int64] = [:]  // key -> estimated capture unix ms
        var span: ClosedRange<Int64>?

        /// Of the frames missing from any stream: how many, how many were missing from every stream
        /// whose stamps span their capture time (two or more), and how many fell where only one did.
        static func attribute(_ samples: [MissingFrames]) -> (all: Int, everywhere: Int, alone: Int) {
            var union: [Int64: Int64] = [:]
            for sample in samples { union.merge(sample.frames) { a, _ in a } }
            var everywhere = 0, alone = 0
            for (key, ms) in union {
                let up = samples.filter { $0.span?.contains(ms) ?? false }
                let missedBy = up.filter { $0.frames[key] != nil }.count
                if up.count <= 1 {
                    alone += 1
                } else if missedBy == up.count {
                    everywhere += 1
                }
            }
            return (union.count, everywhere, alone)
        }
    }

    static func missingFrames(_ stamps: [VideoStats.Stamp]) -> MissingFrames {
        var missing = MissingFrames()
        if let first = stamps.first, let last = stamps.last, first.captureUnixMs <= last.captureUnixMs {
            missing.span = first.captureUnixMs...last.captureUnixMs
        }
        for (a, b) in zip(stamps, stamps.dropFirst()) {
            let gap = LatencyStamp.framesMissing(between: a.counter, and: b.counter)
            guard gap > 0, gap < 300 else { continue }
            let step = Double(b.captureUnixMs - a.captureUnixMs) / Double(gap + 1)
            for i in 1...gap {
                let counter = (Int64(a.counter) + Int64(i)) % 4096
                let ms = a.captureUnixMs + Int64(step * Double(i))
                missing.frames[counter | (ms / 50_000) << 12] = ms
            }
        }
        return missing
    }

    /// Whether the sampled streams of different devices decoded the same stamps (counter and
    /// capture time): the same captured frames, so one capture and encoder.
    static func sharedStampsLine(_ samples: [(String, Set<VideoStats.Stamp>)]) -> String {
        guard samples.count >= 2 else { return "not checked (fewer than 2 decoded streams)" }
        let first = samples[0]
        let parts = samples.dropFirst().map { other in
            "\(first.0) and \(other.0) share \(first.1.intersection(other.1).count) of \(min(first.1.count, other.1.count)) stamps"
        }
        return parts.joined(separator: "; ")
    }
}
