import CGStreamer
import CGstWebRTC
import Foundation
import Glibc
import Testing
import TestSupport
@testable import WebRTCLink

/// Issue 24 item 6 (docs/webrtc.md, "First frame, fifth pass"): GStreamer 1.22's rtpjitterbuffer
/// checks its fast start only when a packet arrives with a packet at the head of its queue. When a
/// whole first frame arrives while its own thread has not yet pushed the stream-start, caps and
/// segment events queued ahead of it, the first packet waits for the whole latency.
/// `cgw_jitterbuffer_start_after_queued_events` lets the first packet in only once those events
/// have left.
@Suite("Jitter buffer start", .serialized)
struct JitterBufferStartTests {
    /// Ten RTP packets of one H.264 frame (payload type 96, consecutive sequence numbers, one
    /// timestamp, the marker on the last), each `size` bytes.
    static func frame(packets: Int = 10, size: Int = 200) -> [[UInt8]] {
        (0..<packets).map { n in
            let sequence = UInt16(1000 + n)
            var bytes: [UInt8] = [0x80, (n == packets - 1 ? 0x80 : 0) | 96,
                                  UInt8(sequence >> 8), UInt8(sequence & 0xff),
                                  0, 0, 0x10, 0, 0xca, 0xfe, 0xba, 0xbe]
            bytes += [0x7c, n == 0 ? 0x85 : (n == packets - 1 ? 0x45 : 0x05)]  // FU-A of an IDR slice
            bytes += [UInt8](repeating: UInt8(n), count: size - bytes.count)
            return bytes
        }
    }

    /// How long the jitter buffer took to push its first packet, in ms, when its own thread is held
    /// `holdMs` on the stream-start event (as when a whole frame arrives before it runs) and the
    /// frame's packets all arrive meanwhile; `latencyMs` is the deadline it would wait otherwise.
    static func firstPacketMs(startAfterEvents: Bool, holdMs: UInt32, latencyMs: Int) throws -> (ms: Double, packets: Int) {
        try GStreamerRuntime.start()
        let description = "appsrc name=src is-live=true do-timestamp=true format=time "
            + "caps=application/x-rtp,media=video,clock-rate=90000,encoding-name=H264,payload=96 "
            + "! rtpjitterbuffer name=jb latency=\(latencyMs) faststart-min-packets=2 ! appsink name=sink sync=false"
        var error: UnsafeMutablePointer<GError>?
        let parsed = gst_parse_launch(description, &error)
        defer { if let error { g_error_free(error) } }
        let pipeline = try #require(parsed, "\(error.map { String(cString: $0.pointee.message) } ?? "no pipeline")")
        _ = gst_object_ref_sink(pipeline)  // parsed as a floating reference
        defer {
            _ = cgst_element_set_state(pipeline, CGST_STATE_NULL)
            cgst_object_unref(pipeline)
        }
        let source = try #require(cgst_bin_get_element(pipeline, "src"))
        let jitterBuffer = try #require(cgst_bin_get_element(pipeline, "jb"))
        let sink = try #require(cgst_bin_get_element(pipeline, "sink"))
        defer {
            cgst_object_unref(source)
            cgst_object_unref(jitterBuffer)
            cgst_object_unref(sink)
        }
        if startAfterEvents {
            #expect(cgw_jitterbuffer_start_after_queued_events(jitterBuffer))
        }
        // The jitter buffer's own thread, late: it holds the stream-start event on its way out.
        let sourcePad = try #require(gst_element_get_static_pad(jitterBuffer, "src"))
        defer { cgst_object_unref(sourcePad) }
        let hold = UnsafeMutablePointer<UInt32>.allocate(capacity: 1)
        hold.initialize(to: holdMs)
        _ = gst_pad_add_probe(sourcePad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, { _, info, data in
            guard let info, let data,
                  let event = info.pointee.data?.assumingMemoryBound(to: GstEvent.self),
                  event.pointee.type == GST_EVENT_STREAM_START else { return GST_PAD_PROBE_OK }
            usleep(data.assumingMemoryBound(to: UInt32.self).pointee * 1000)
            return GST_PAD_PROBE_REMOVE
        }, hold, { data in data?.assumingMemoryBound(to: UInt32.self).deallocate() })

        // The whole frame is queued in the appsrc before it plays (a live source waits in PAUSED):
        // its thread pushes the events, then the ten packets back to back.
        _ = cgst_element_set_state(pipeline, CGST_STATE_PAUSED)
        let packets = frame()
        for packet in packets {
            let pushed = packet.withUnsafeBytes { cgst_app_src_push_copy(source, $0.baseAddress, $0.count, .max, .max) }
            #expect(pushed == 0)
        }
        let started = ContinuousClock.now
        _ = cgst_element_set_state(pipeline, CGST_STATE_PLAYING)
        let first = try #require(cgst_app_sink_pull(sink, 5_000_000_000), "no packet out of the jitter buffer within 5 s")
        let elapsed = ContinuousClock.now - started
        cgst_sample_unref(first)
        var out = 1
        while out < packets.count, let sample = cgst_app_sink_pull(sink, 2_000_000_000) {
            cgst_sample_unref(sample)
            out += 1
        }
        let ms = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        return (ms, out)
    }

    @Test("a whole first frame that arrives before the buffer's thread ran is pushed once its events are out, not at the latency")
    func firstFrameIsNotHeldForTheLatency() throws {
        // Held 300 ms, latency 1,500 ms: with the fix the first packet leaves right after the hold;
        // without it, at the latency when the race happens (not every time: six tries, see below).
        for _ in 0..<Self.tries {
            let result = try Self.firstPacketMs(startAfterEvents: true, holdMs: 300, latencyMs: 1500)
            #expect(result.ms < 1000, "first packet out \(result.ms) ms after play (the latency is 1,500 ms)")
            #expect(result.ms >= 290, "the hold of the stream-start event was not in effect (\(result.ms) ms)")
            #expect(result.packets == 10)
        }
    }

    /// The race does not happen every time (in the parallel run of the whole suite one try saw no
    /// race; alone, with a 1,000 ms hold, 2 of 3 tries showed none), so each side tries six times:
    /// the fix must hold in all, the race show in at least one.
    static let tries = 6

    /// What the test above would see without the fix (GStreamer 1.22). Should a newer GStreamer
    /// re-check its fast start once its events are out, this fails, and the fix can go.
    @Test("the race it fixes: without it the first packet waits for the latency (in at least one of six tries)")
    func withoutItTheFirstPacketWaitsForTheLatency() throws {
        var slowest = 0.0
        for _ in 0..<Self.tries where slowest < 1400 {
            let result = try Self.firstPacketMs(startAfterEvents: false, holdMs: 300, latencyMs: 1500)
            #expect(result.packets == 10)
            slowest = max(slowest, result.ms)
        }
        #expect(slowest >= 1400, "first packet out at most \(slowest) ms after play in \(Self.tries) tries: the race did not happen")
    }
}
