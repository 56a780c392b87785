import Foundation
import Testing
import TestSupport
@testable import WebRTCLink

#if canImport(Glibc)
import Glibc
#endif

/// Measurements, run on request only: `WEBRTCLINK_BENCH=1 swift test -c release --filter Benchmark`.
/// They print numbers ("[bench] ..."); the expectations only check that the link ran.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["WEBRTCLINK_BENCH"] != nil))
struct BenchmarkTests {
    private static func cpuSeconds(_ who: __rusage_who) -> Double {
        var usage = rusage()
        getrusage(who.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
            + Double(usage.ru_stime.tv_usec) / 1e6
    }

    @Test func cpuOfOne720p30Stream() async throws {
        let seconds = 10.0
        // 1. The device's send branch alone (test pattern, x264 as configured here, payloader),
        //    in a gst-launch-1.0 child process.
        let video = VideoFormat(width: 1280, height: 720, fps: 30)
        let encoder = PipelineDescriptions.encoder(
            factory: "x264enc", video: video, bitrateKbps: PipelineDescriptions.defaultBitrateKbps(video),
            keyFrameIntervalSeconds: 2)
        let description = "videotestsrc is-live=true pattern=ball num-buffers=\(Int(seconds) * 30) ! "
            + PipelineDescriptions.rawCaps(video) + " ! queue max-size-buffers=2 ! " + encoder + " ! "
            + PipelineDescriptions.videoPayloader(payloadType: 96) + " ! fakesink sync=false"
        let childrenBefore = Self.cpuSeconds(RUSAGE_CHILDREN)
        let started = ContinuousClock.now
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "gst-launch-1.0 -q " + description]
        try process.run()
        await offThePool { process.waitUntilExit() }
        let wall = (ContinuousClock.now - started)
        let encodeCPU = Self.cpuSeconds(RUSAGE_CHILDREN) - childrenBefore
        let wallSeconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
        print("[bench] x264 send branch 1280x720@30 alone: \(String(format: "%.1f", 100 * encodeCPU / wallSeconds))% of one core (\(String(format: "%.2f", encodeCPU)) s CPU in \(String(format: "%.2f", wallSeconds)) s)")
        #expect(process.terminationStatus == 0)

        // 2. A whole link in this process: the device encodes and sends 720p30 with a PCMA tone,
        //    the app receives, decodes and hands every frame's luma over.
        let harness = LinkHarness()
        defer { harness.closeAll() }
        let offer = try await harness.startOfferer()
        try await harness.startAnswerer(offer: offer, media: SendMedia(video: video, encoder: .software))
        #expect(try await waitUntil(seconds: 20) { harness.framesReceivedByOfferer >= 30 })
        let firstFrame = harness.answerToFirstFrame.map { "\($0)" } ?? "?"
        let framesBefore = harness.framesReceivedByOfferer
        let selfBefore = Self.cpuSeconds(RUSAGE_SELF)
        try await Task.sleep(for: .seconds(seconds))
        let linkCPU = Self.cpuSeconds(RUSAGE_SELF) - selfBefore
        let frames = harness.framesReceivedByOfferer - framesBefore
        print("[bench] link 1280x720@30 (device encode+send, app receive+decode, one process): \(String(format: "%.1f", 100 * linkCPU / seconds))% of one core; \(String(format: "%.1f", Double(frames) / seconds)) fps decoded; answer -> first frame \(firstFrame)")
        #expect(frames > 0)
    }
}
