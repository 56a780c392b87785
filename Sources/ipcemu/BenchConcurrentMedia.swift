import AppSimulator
import Foundation
import IPCWire
import WebRTCLink

/// `ipcemu bench media --concurrent N` (issue 11): N live-view links of one device, in its own
/// process, all streaming at once. The app decodes a sample of the streams (stamps read, counter
/// gaps counted) and only depayloads and counts the others (decoding them all would measure the
/// app, not the device). Streams are added one at a time, with the device's CPU measured after
/// each: the CPU curve.
struct ConcurrentMediaBench {
    var streams: Int
    var decodedSample: Int
    var stream: StreamType
    var seconds: Double
    var stepSeconds: Double

    struct Opened {
        var sessionId: String
        var decodes: Bool
    }

    func run(app: AppUser, devId: String, devicePid: Int32) async throws -> Bool {
        // Let the device finish starting (plugins load in the background) before the baseline.
        try? await Task.sleep(for: .seconds(2))
        let baseline = await BenchCommand.Media.cpuShare(pid: devicePid, over: stepSeconds)
        say(String(format: "  0 streams: device CPU %5.1f%% of one core", baseline))
        var opened: [Opened] = []
        var firstFrameMs: [Double] = []
        var curve: [(Int, Double)] = [(0, baseline)]
        var failures = 0
        for k in 1...streams {
            let sid = "bench-live-\(k)"
            let decodes = k <= decodedSample
            _ = try await app.openVideo(streamType: stream, sessionId: sid, devId: devId, decodes: decodes)
            opened.append(Opened(sessionId: sid, decodes: decodes))
            let first = await Self.firstFrame(app: app, sessionId: sid, decodes: decodes)
            if let ms = first {
                firstFrameMs.append(ms)
            } else {
                failures += 1
                note("stream \(k): no video within 10 s")
            }
            let cpu = await BenchCommand.Media.cpuShare(pid: devicePid, over: stepSeconds)
            curve.append((k, cpu))
            say(String(format: "  %d streams: device CPU %5.1f%% of one core (answer -> first frame %@); load average %@", k, cpu,
                       first.map { String(format: "%.0f ms", $0) } ?? "-", BenchCommand.Media.loadAverage))
        }

        // Every stream at once for `seconds`: counters before and after.
        var before: [String: (Int, Int)] = [:]
        for o in opened { before[o.sessionId] = await counters(app: app, o) }
        let cpuAll = await BenchCommand.Media.cpuShare(pid: devicePid, over: seconds)
        let loadAfter = BenchCommand.Media.loadAverage
        var fps: [Double] = []
        var gapMs = 0
        var dropped = 0, stampErrors = 0, decodedFrames = 0
        for o in opened {
            let after = await counters(app: app, o)
            let b = before[o.sessionId] ?? (0, 0)
            fps.append(Double(after.0 - b.0) / seconds)
            gapMs = max(gapMs, after.1)
            if o.decodes, let stats = await app.videoStats(sessionId: o.sessionId) {
                dropped += stats.framesDropped
                stampErrors += stats.stampErrors
                decodedFrames += stats.framesDecoded
            }
        }
        for o in opened { await app.closeVideo(sessionId: o.sessionId) }

        let perStream = streams > 1 ? (curve[streams].1 - curve[1].1) / Double(streams - 1) : curve[1].1 - baseline
        let sortedFPS = fps.sorted()
        say("bench media --concurrent \(streams): \(stream == .main ? "main" : "sub") stream, \(decodedSample) decoded, "
            + "\(failures) without video")
        say(String(format: "  all %d streaming for %.0f s: device CPU %.1f%% of one core (load average %@)", streams, seconds,
                   cpuAll, loadAfter))
        say(String(format: "  device CPU per added stream: %.2f%% of one core (1 -> %d streams; least squares %.2f%%); first stream %.1f%% over idle",
                   perStream, streams, Self.slope(curve.filter { $0.0 >= 1 }), curve[1].1 - baseline))
        say(String(format: "  per-stream fps: min %.1f, median %.1f, max %.1f", sortedFPS.first ?? 0,
                   sortedFPS.isEmpty ? 0 : sortedFPS[sortedFPS.count / 2], sortedFPS.last ?? 0))
        say("  longest gap between two frames of a stream (whole run): \(gapMs) ms")
        say("  decoded sample: \(decodedFrames) frames, \(stampErrors) stamp errors, \(dropped) frames dropped (counter gaps)")
        say("  answer -> first frame:      \(Percentiles(firstFrameMs).summary)")
        say("  CPU curve (streams: % of one core): " + curve.map { String(format: "%d: %.1f", $0.0, $0.1) }.joined(separator: ", "))
        return failures == 0
    }

    /// The least-squares slope of a CPU curve (% of one core per added stream).
    static func slope(_ points: [(Int, Double)]) -> Double {
        let valid = points.filter { $0.1.isFinite }
        guard valid.count >= 2 else { return .nan }
        let n = Double(valid.count)
        let mx = valid.reduce(0) { $0 + Double($1.0) } / n
        let my = valid.reduce(0) { $0 + $1.1 } / n
        let sxx = valid.reduce(0) { $0 + (Double($1.0) - mx) * (Double($1.0) - mx) }
        let sxy = valid.reduce(0) { $0 + (Double($1.0) - mx) * ($1.1 - my) }
        return sxx > 0 ? sxy / sxx : .nan
    }

    /// Milliseconds from the 302 answer to the stream's first frame (decoded, or depayloaded).
    static func firstFrame(app: AppUser, sessionId: String, decodes: Bool) async -> Double? {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if let (stats, answerAt) = await app.videoLinkStatistics(sessionId: sessionId), let answerAt {
                if decodes, let first = await app.videoStats(sessionId: sessionId)?.firstFrameAt {
                    return first.timeIntervalSince(answerAt) * 1000
                }
                if !decodes, stats.firstAccessUnitUnixNanos > 0 {
                    return Double(stats.firstAccessUnitUnixNanos) / 1e6 - answerAt.timeIntervalSince1970 * 1000
                }
            }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return nil
    }

    /// Frames so far and the longest gap (ms) of one stream.
    private func counters(app: AppUser, _ o: Opened) async -> (Int, Int) {
        guard let (stats, _) = await app.videoLinkStatistics(sessionId: o.sessionId) else { return (0, 0) }
        if o.decodes {
            let frames = await app.videoStats(sessionId: o.sessionId)?.framesDecoded ?? 0
            return (frames, 0)
        }
        return (stats.videoAccessUnitsReceived, stats.longestAccessUnitGapMs)
    }
}
