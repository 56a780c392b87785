import Camera
@testable import ControlAPI
import Dispatch
@testable import Emulator
import Synchronization
import Testing
import TestSupport
import WebRTCLink

/// Issue 24 item 5: what the shared encoders' fan-outs count reaches `/metrics`
/// (`ipcemu_video_fanout_*`, docs/control.md): a link whose delivery lane falls behind moves the
/// lane-overflow counter, and a feed that stops keeps its counts in the process's sums.
@Suite("Metrics: video fan-out", .heavy)
struct FanOutMetricsTests {
    static let camera = CameraConfig(kind: .testPattern, width: 320, height: 180, fps: 30)
    static let output = VideoFormat(width: 320, height: 180, fps: 30)

    @Test("every family is a counter (subscribers a gauge), present at zero, fed up to the given counts")
    func families() throws {
        let metrics = ControlMetrics(perDevice: true)
        let zero = try PrometheusText(metrics.render([]))
        for name in ["access_units", "key_frames", "key_frame_requests", "key_frames_forced", "deliveries", "deltas_skipped",
                     "starts_from_recent", "recent_units_replayed", "catch_ups_abandoned", "lane_overflows",
                     "encoder_frames", "encoder_frames_dropped"] {
            #expect(zero.types["ipcemu_video_fanout_\(name)_total"] == "counter", "\(name)")
            #expect(zero.value("ipcemu_video_fanout_\(name)_total", [:]) == 0, "\(name)")
        }
        #expect(zero.types["ipcemu_video_fanout_subscribers"] == "gauge")
        var counts = FanOutStatistics()
        counts.laneOverflows = 3
        counts.deliveries = 900
        counts.encoderFramesDropped = 4
        let m = try PrometheusText(metrics.render([], fanOut: counts, fanOutSubscribers: 2))
        #expect(m.value("ipcemu_video_fanout_lane_overflows_total", [:]) == 3)
        #expect(m.value("ipcemu_video_fanout_deliveries_total", [:]) == 900)
        #expect(m.value("ipcemu_video_fanout_encoder_frames_dropped_total", [:]) == 4)
        #expect(m.value("ipcemu_video_fanout_subscribers", [:]) == 2)
    }

    @Test("a link stuck on its lane: lane overflows counted in /metrics' text; the feed stopped, the counts stay")
    func laneOverflowReachesMetrics() async throws {
        let feeds = VideoFeeds()
        feeds.linger = .zero
        let feed = try feeds.acquire(camera: Self.camera, output: Self.output)
        let gate = DispatchSemaphore(value: 0)
        let stuck = Atomic<Bool>(false)
        // The first unit holds the lane (a link out of CPU); what comes meanwhile piles up on it.
        let id = feed.fanOut.subscribe { _, _ in
            if !stuck.exchange(true, ordering: .relaxed) { gate.wait() }
        }
        let metrics = ControlMetrics(perDevice: false)
        func scrape() throws -> PrometheusText {
            // The same feeds twice (two devices of one process): counted once.
            let fanOut = DeviceRegistry.fanOut([feeds, feeds])
            return try PrometheusText(metrics.render([], fanOut: fanOut.statistics, fanOutSubscribers: fanOut.subscribers))
        }
        let deadline = ContinuousClock.now + .seconds(20)
        while feeds.fanOut.statistics.laneOverflows == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        gate.signal()
        let during = try scrape()
        let overflows = during.value("ipcemu_video_fanout_lane_overflows_total", [:]) ?? 0
        #expect(overflows >= 1)
        #expect((during.value("ipcemu_video_fanout_access_units_total", [:]) ?? 0) >= Double(VideoFanOut.laneBacklogLimit))
        #expect(during.value("ipcemu_video_fanout_subscribers", [:]) == 1)
        // The test pattern's frames go through the feed's encoder: at least one per unit out.
        let encoded = during.value("ipcemu_video_fanout_encoder_frames_total", [:]) ?? 0
        #expect(encoded >= (during.value("ipcemu_video_fanout_access_units_total", [:]) ?? 0) && encoded > 0, "\(encoded)")

        feed.fanOut.unsubscribe(id)
        feeds.release(feed)
        let stopDeadline = ContinuousClock.now + .seconds(10)
        while feeds.counts.feeds > 0, ContinuousClock.now < stopDeadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(feeds.counts.feeds == 0)
        let after = try scrape()
        #expect((after.value("ipcemu_video_fanout_lane_overflows_total", [:]) ?? 0) >= overflows, "a stopped feed's counts stay")
        #expect(after.value("ipcemu_video_fanout_subscribers", [:]) == 0)
        #expect((after.value("ipcemu_video_fanout_encoder_frames_total", [:]) ?? 0) >= encoded, "a stopped encoder's frames stay")
    }
}
