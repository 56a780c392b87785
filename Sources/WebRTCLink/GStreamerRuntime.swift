// Process-wide GStreamer state: gst_init once, the one shared GLib loop thread (DESIGN.md: the
// loop owns its own thread, shared by all links), and helpers to pass Swift objects to C.
import CGstWebRTC
import Foundation
import Synchronization

public enum GStreamerRuntime {
    /// Initialises GStreamer and starts the shared loop thread (idempotent, thread-safe).
    public static func start() throws(WebRTCLinkError) {
        var error: UnsafeMutablePointer<CChar>?
        guard cgw_initialize(&error) else { throw .gstreamerUnavailable(takeCString(error)) }
        cgw_shared_loop_start()
    }

    /// Loads, once per process, the plugins a link uses and makes the DTLS certificate, by making
    /// (and dropping) one of each element: the first call of a new process then waits for none of
    /// that (issue 11). Elements this machine lacks are skipped. Blocks for a few hundred ms: call
    /// it off the hot path, at start-up.
    public static func preloadPlugins() {
        // Held while loading, so a second caller waits until the plugins are loaded (no callbacks run).
        preloaded.withLock { done in
            guard !done else { return }
            done = true
            guard (try? start()) != nil else { return }
            for element in preloadedElements where cgw_element_factory_exists(element) {
                var error: UnsafeMutablePointer<CChar>?
                if let made = cgw_pipeline_new_uncounted(element, &error) {
                    cgw_element_unref(made)
                } else {
                    cgw_free(error)
                }
            }
        }
    }

    private static let preloaded = Mutex(false)
    private static let preloadedElements = [
        "webrtcbin", "dtlssrtpenc", "dtlssrtpdec", "nicesrc", "nicesink", "rtpbin", "rtpjitterbuffer", "srtpenc",
        "srtpdec", "rtpfunnel", "x264enc", "v4l2h264enc", "h264parse", "rtph264pay", "rtph264depay", "avdec_h264",
        "videoconvert", "videoscale", "jpegdec", "jpegenc", "audiotestsrc", "audioconvert", "audioresample", "alawenc",
        "rtppcmapay", "rtppcmadepay", "alawdec", "opusenc", "rtpopuspay", "rtpopusdepay", "opusdec", "appsrc", "appsink",
        "queue", "fakesink",
    ]

    /// Whether this machine has a GStreamer element (after `start()`).
    public static func hasElement(_ factory: String) -> Bool { cgw_element_factory_exists(factory) }

    /// Pipelines made by this library that are not in the NULL state: 0 once every link is closed.
    public static var runningPipelineCount: Int { Int(cgw_live_pipeline_count()) }

    /// Unix time in ns, the clock `DecodedVideoFrame.arrivalUnixNanos` uses.
    public static func unixTimeNanos() -> Int64 { cgw_unix_time_ns() }

    /// Every address of an interface that is up, loopback included (no IPv6 link-local).
    public static func localInterfaceAddresses() -> [String] {
        takeCString(cgw_local_interface_addresses()).split(separator: "\n").map(String.init)
    }
}

/// Frees a string the shim allocated and returns its Swift copy ("" for NULL).
func takeCString(_ pointer: UnsafeMutablePointer<CChar>?) -> String {
    guard let pointer else { return "" }
    defer { cgw_free(pointer) }
    return String(cString: pointer)
}

/// A GStreamer object pointer on its way into (or out of) a Mutex's state: the compiler cannot
/// see that a C pointer may cross threads, so pointers are carried in this. Who owns the
/// reference is up to the holder, as with the bare pointer.
// @unchecked: wraps a C GStreamer/GObject pointer (GstElement, GstPad, GstSample, data channel); GStreamer objects are refcounted and lock themselves.
struct GstRef: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
    init(_ raw: UnsafeMutableRawPointer) { pointer = OpaquePointer(raw) }
    var raw: UnsafeMutableRawPointer { UnsafeMutableRawPointer(pointer) }
}

/// What C holds for one registration: a retained box with a weak reference to the link core, so
/// that GStreamer objects owned by the core never keep the core alive (no cycle through C).
final class CoreReference: Sendable {
    weak let core: PeerCore?
    init(_ core: PeerCore) { self.core = core }

    /// A +1 reference for C; balanced by `releaseCoreReference` (the shim's release function).
    static func retained(_ core: PeerCore) -> UnsafeMutableRawPointer {
        Unmanaged.passRetained(CoreReference(core)).toOpaque()
    }
}

/// The shim's release function for every registration: balances `CoreReference.retained`.
func releaseCoreReference(_ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    Unmanaged<CoreReference>.fromOpaque(context).release()
}

/// The core a callback's context points to, if it is still alive.
func coreFrom(_ context: UnsafeMutableRawPointer?) -> PeerCore? {
    guard let context else { return nil }
    return Unmanaged<CoreReference>.fromOpaque(context).takeUnretainedValue().core
}
