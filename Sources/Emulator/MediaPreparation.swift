import Dispatch
import WebRTCLink

/// Getting media ready before a call needs it (issue 11: the first frame in under 100 ms).
public enum MediaPreparation {
    /// For a long-running process (`ipcemu run`, the benchmark): loads GStreamer's plugins and
    /// makes the DTLS certificate now, in the background, and from then on starts a call's video
    /// feed while it rings (its encoder runs and has a key frame ready when the offer comes).
    public static func enable() {
        VideoFeeds.shared.preparesWhileRinging = true
        DispatchQueue.global().async { GStreamerRuntime.preloadPlugins() }
    }

    /// How long a video feed nobody uses keeps running (default 5 s).
    public static func setFeedLinger(_ duration: Duration) { VideoFeeds.shared.linger = duration }

    /// At most this many live-view links in this process (default 64); beyond, an offer without
    /// an answered call is refused with `disconnect` (close_reason 2). Calls never count.
    public static func setProcessLiveViewLimit(_ limit: Int) { LiveViewSlots.shared.limit = limit }

    /// Open shared captures and H.264 feeds in this process.
    public static var openFeeds: (captures: Int, feeds: Int) { VideoFeeds.shared.counts }
}
