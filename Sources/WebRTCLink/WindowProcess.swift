// The desktop window of `display: window`, drawn by a child process. Xlib ends the process whose
// X server goes away (its default I/O error handler calls exit, and libX11 offers no way to stop
// that for a connection a GStreamer sink opened itself), so the window's sink runs in a
// `gst-launch-1.0` child fed the decoded frames through a pipe (GDP, caps included): when the X
// session ends, the child ends and the device's call goes on without its window.
import CGstWebRTC
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

final class WindowProcess: Sendable {
    /// The write end of the child's stdin (for the receive branch's `fdsink`). Closed by `finish`.
    let input: Int32
    let pid: pid_t
    let what: String

    private struct State {
        var finishing = false
        var ended = false
        var inputClosed = false
    }
    private let state = Mutex(State())

    /// Where gst-launch-1.0 is (gstreamer1.0-tools); nil when it is not installed.
    static let launcher: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let candidates = path.split(separator: ":").map { "\($0)/gst-launch-1.0" } + ["/usr/bin/gst-launch-1.0"]
        return candidates.first { access($0, X_OK) == 0 }
    }()

    /// The child's pipeline, one token per argument (gst-launch escapes each): GDP from stdin, the
    /// newest frames only (a slow X server never backs up the pipe), scaled to the window.
    static func arguments(sink: String, xDisplay: String?) -> [String] {
        ["-q", "fdsrc", "fd=0", "blocksize=65536", "!", "gdpdepay", "!",
         "queue", "max-size-buffers=2", "max-size-bytes=0", "max-size-time=0", "leaky=downstream", "!",
         "videoconvert", "!", "videoscale", "!", sink, "sync=false"]
            + (xDisplay.map { ["display=\($0)"] } ?? [])
    }

    /// Starts the window's child. `ended` is called (on the child's reaper thread) when it ends
    /// before `finish`: the X server went away, the window was closed, or it could not open.
    static func start(sink: String, xDisplay: String?, ended: @escaping @Sendable (String) -> Void)
        -> Result<WindowProcess, WindowProcessError>
    {
        let what = "display window (\(sink)" + (xDisplay.map { " on \($0)" } ?? "") + ")"
        guard let launcher else {
            return .failure(WindowProcessError(text: "\(what): gst-launch-1.0 is not installed (Debian: gstreamer1.0-tools)"))
        }
        // A write to a pipe whose reader ended must be an error (EPIPE), not a signal that ends us.
        signal(SIGPIPE, SIG_IGN)
        let argv: [UnsafeMutablePointer<CChar>?] = ([launcher] + arguments(sink: sink, xDisplay: xDisplay)).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var input: Int32 = -1
        var errors: Int32 = -1
        let pid = argv.withUnsafeBufferPointer { cgw_spawn_piped(launcher, $0.baseAddress, &input, &errors) }
        guard pid > 0 else {
            return .failure(WindowProcessError(text: "\(what): cannot start gst-launch-1.0: \(String(cString: strerror(-pid)))"))
        }
        let process = WindowProcess(input: input, pid: pid, what: what)
        let errorsRead = errors
        let reaper = Thread { process.reap(errors: errorsRead, ended: ended) }
        reaper.name = "window-reaper"
        reaper.start()
        return .success(process)
    }

    private init(input: Int32, pid: pid_t, what: String) {
        self.input = input
        self.pid = pid
        self.what = what
    }

    deinit {
        // The reaper thread holds the process until the child ended, so the input is only left
        // open here when `finish` never ran and the child is gone.
        state.withLock { s in
            if !s.inputClosed { close(input) }
        }
    }

    /// Ends the window: closes the child's stdin (it sees the end of the stream and exits) and
    /// kills it if it has not exited 2 s later. Call only once nothing writes to `input` (the
    /// pipeline stopped): the descriptor number is free for reuse afterwards.
    func finish() {
        let close: Bool = state.withLock { s in
            s.finishing = true
            defer { s.inputClosed = true }
            return !s.inputClosed
        }
        guard close else { return }
        Glibc.close(input)
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + 2) { [self] in
            // Under the lock: `ended` is set only while the child is still a zombie, so the pid
            // cannot belong to another process here.
            state.withLock { s in if !s.ended { kill(pid, SIGKILL) } }
        }
    }

    /// The reaper thread: keeps the tail of the child's stderr, waits for it to end, reports an
    /// unexpected end, and reaps it.
    private func reap(errors: Int32, ended: @Sendable (String) -> Void) {
        var tail: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(errors, $0.baseAddress, $0.count) }
            if n > 0 {
                tail.append(contentsOf: buffer[0..<n])
                if tail.count > 2048 { tail.removeFirst(tail.count - 2048) }
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        close(errors)
        // Wait without reaping, so the pid stays ours while `finish` may still kill it.
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
        let expected = state.withLock { s in
            s.ended = true
            return s.finishing
        }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        guard !expected else { return }
        let signal = raw & 0x7f
        let status = signal == 0 ? "exit status \((raw >> 8) & 0xff)" : "signal \(signal)"
        let said = String(decoding: tail, as: UTF8.self)
            .split(whereSeparator: \.isNewline).suffix(3).joined(separator: " / ")
        ended("\(what): the window process ended (\(status))" + (said.isEmpty ? "" : ": \(said)"))
    }
}

struct WindowProcessError: Error, CustomStringConvertible {
    let text: String
    var description: String { text }
}
