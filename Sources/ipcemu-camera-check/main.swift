// ipcemu-camera-check: a small program the tests run.
//
//   ipcemu-camera-check capture DEVICE FRAMES [WxH] [FPS] [FORMAT]
//       Captures FRAMES frames through Camera's V4L2Source (DEVICE: /dev/videoN or a card name)
//       and prints one line "CAMERA-CHECK: ok ..." or "CAMERA-CHECK: fail ...". The vivid
//       integration test runs it inside a qemu guest.
//   ipcemu-camera-check unplug DEVICE
//       vivid only: captures, presses vivid's "Disconnect" control (an emulated USB unplug; the
//       device reconnects once every file handle is closed), and checks that the source reports
//       no video and then picks the camera up again. Prints "CAMERA-CHECK: ok unplug ...".
//   ipcemu-camera-check disconnect DEVICE [HOLD_SECONDS]
//       vivid only: presses vivid's "Disconnect" control once, capturing nothing (another process,
//       e.g. `ipcemu run`, is the one using the camera). vivid reconnects when the last file handle
//       is closed; with HOLD_SECONDS this program keeps a handle open that long, so the camera stays
//       unplugged for about that time (every reopen meanwhile fails with ENODEV), then closes it.
//       Prints "CAMERA-CHECK: ok disconnect DEVICE held=S" or "CAMERA-CHECK: fail disconnect ...".
//   ipcemu-camera-check bench-pattern [WxH] [FPS] [SECONDS] [hold]
//       Runs the test pattern in real time and prints the process's CPU use as % of one core.
//       With "hold", the consumer keeps each frame until the next (forcing a copy per frame).
import Camera
import Dispatch
import Foundation
import Synchronization

func fail(_ message: String) -> Never {
    print("CAMERA-CHECK: fail \(message)")
    exit(1)
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}

/// What a source delivered, behind a Mutex; `wait` blocks until a condition on it holds.
final class Collector: Sendable {
    struct State {
        var frames: [Frame] = []
        var statuses: [FrameSourceStatus] = []
        var held: Frame?
        var count = 0
    }
    private let state = Mutex(State())
    /// Signalled after every event: a waiter looks at the state again.
    private let changed = DispatchSemaphore(value: 0)
    let limit: Int
    let keep: Bool
    init(limit: Int, keep: Bool) {
        self.limit = limit
        self.keep = keep
    }
    func handle(_ event: FrameSourceEvent) {
        state.withLock { st in
            switch event {
            case .status(let s): st.statuses.append(s)
            case .frame(let f):
                st.count += 1
                if keep, st.frames.count < limit {
                    // Keep metadata only: the bytes of a few frames are enough to check.
                    var light = f
                    if st.frames.count > 2 { light.bytes = [] }
                    st.frames.append(light)
                } else {
                    st.held = f
                }
            }
        }
        changed.signal()
    }
    /// Counts a frame without keeping it.
    func countFrame() { state.withLock { $0.count += 1 } }
    var snapshot: State { state.withLock { $0 } }
    /// Waits until `predicate` holds (true) or `seconds` have passed (then whether it holds).
    func wait(_ seconds: Double, until predicate: (State) -> Bool) -> Bool {
        let deadline = DispatchTime.now() + .nanoseconds(Int(max(0, min(seconds, 1e6)) * 1e9))
        while true {
            if state.withLock({ predicate($0) }) { return true }
            if changed.wait(timeout: deadline) == .timedOut { return state.withLock { predicate($0) } }
        }
    }
}

let args = Array(CommandLine.arguments.dropFirst())
guard let mode = args.first else { fail("usage: ipcemu-camera-check capture|unplug|disconnect|bench-pattern ...") }

func size(_ index: Int, _ fallback: (Int, Int)) -> (Int, Int) {
    guard args.count > index else { return fallback }
    do { return try CameraConfig.parseSize(args[index]) } catch { fail("\(error)") }
}

switch mode {
case "capture":
    guard args.count >= 3, let count = Int(args[2]), count > 0 else { fail("usage: capture DEVICE FRAMES [WxH] [FPS] [FORMAT]") }
    let device: V4L2Source.Device = args[1].hasPrefix("/") ? .path(args[1]) : .name(args[1])
    let (w, h) = size(3, (640, 360))
    let fps = args.count > 4 ? Double(args[4]) ?? 30 : 30
    let format = args.count > 5 ? PixelFormat(rawValue: args[5].uppercased()) : nil
    let source = V4L2Source(device: device, request: .init(width: w, height: h, fps: fps, format: format))
    let collector = Collector(limit: count, keep: true)
    let started = Date()
    do { try source.start { collector.handle($0) } } catch { fail("\(error)") }
    _ = collector.wait(120) { $0.frames.count >= count }
    let collected = collector.snapshot
    let frames = collected.frames
    let statuses = collected.statuses
    source.stop()
    let elapsed = Int(Date().timeIntervalSince(started) * 1000)
    guard frames.count >= count, let first = frames.first, let last = frames.last else {
        fail("got \(frames.count) of \(count) frames in \(elapsed) ms; status: \(statuses.map(\.description))")
    }
    let sequences = frames.map(\.sequence)
    let increasing = zip(sequences, sequences.dropFirst()).allSatisfy { $0 < $1 }
    let timestamps = frames.map(\.timestampNs)
    let monotonic = zip(timestamps, timestamps.dropFirst()).allSatisfy { $0 < $1 }
    let now = Int64(Date().timeIntervalSince1970 * 1000)
    let realTime = frames.allSatisfy { abs($0.captureTimeMs - now) < 300_000 }
    let expected = first.format.rawFrameSize(width: first.width, height: first.height)
    let sizeOK = expected.map { e in frames.prefix(3).allSatisfy { $0.bytes.count == e } } ?? !first.bytes.isEmpty
    let live = statuses.first { if case .live = $0 { return true } else { return false } }
    let spanMs = Double(last.timestampNs - first.timestampNs) / 1e6
    let measuredFPS = frames.count > 1 ? Double(frames.count - 1) * 1000 / max(spanMs, 1) : 0
    let verdict = increasing && monotonic && realTime && sizeOK ? "ok" : "fail"
    print("CAMERA-CHECK: \(verdict) frames=\(frames.count) format=\(first.format) size=\(first.width)x\(first.height)"
          + " seq=\(first.sequence)..\(last.sequence) increasing=\(increasing) monotonic=\(monotonic)"
          + " realtime=\(realTime) bytes=\(sizeOK) fps=\(String(format: "%.1f", measuredFPS)) elapsed_ms=\(elapsed)"
          + " status=\"\(live?.description ?? "none")\"")
    exit(verdict == "ok" ? 0 : 1)

case "unplug":
    guard args.count >= 2 else { fail("usage: unplug DEVICE") }
    let path = args[1]
    let source = V4L2Source(device: .path(path), request: .init(width: 320, height: 180, fps: 30),
                            retry: .init(initialDelayMs: 100, maximumDelayMs: 400, stallTimeoutMs: 3000))
    let collector = Collector(limit: 100_000, keep: true)
    do { try source.start { collector.handle($0) } } catch { fail("\(error)") }
    func waitFor(_ seconds: Double, _ predicate: (Collector.State) -> Bool) -> Bool { collector.wait(seconds, until: predicate) }
    guard waitFor(30, { $0.frames.count >= 10 }) else { fail("unplug: no frames before the unplug") }
    let vividDisconnect: UInt32 = 0x00f0_f000 + 65  // VIVID_CID_DISCONNECT
    do { try V4L2Control.set(device: path, id: vividDisconnect, value: 0) } catch { fail("unplug: pressing Disconnect: \(error)") }
    let t0 = Date()
    guard waitFor(30, { $0.statuses.contains { if case .noVideo = $0 { return true } else { return false } } }) else {
        fail("unplug: the source never reported no video; statuses \(collector.snapshot.statuses)")
    }
    let lostAfter = Int(Date().timeIntervalSince(t0) * 1000)
    let framesAtLoss = collector.snapshot.frames.count
    guard waitFor(60, { c in c.frames.count >= framesAtLoss + 10 }) else {
        fail("unplug: the camera did not come back; statuses \(collector.snapshot.statuses)")
    }
    let backAfter = Int(Date().timeIntervalSince(t0) * 1000)
    source.stop()
    let seen = collector.snapshot
    let statuses = seen.statuses.map(\.description)
    let sequences = seen.frames.map(\.sequence)
    let increasing = zip(sequences, sequences.dropFirst()).allSatisfy { $0 < $1 }
    let lives = statuses.filter { $0.hasPrefix("live") }.count
    let reason = statuses.first { $0.hasPrefix("no video") } ?? ""
    let ok = increasing && lives == 2
    print("CAMERA-CHECK: \(ok ? "ok" : "fail") unplug lost_ms=\(lostAfter) back_ms=\(backAfter) lives=\(lives)"
          + " increasing=\(increasing) reason=\"\(reason)\"")
    exit(ok ? 0 : 1)

case "disconnect":
    guard args.count >= 2 else { fail("usage: disconnect DEVICE [HOLD_SECONDS]") }
    let path = args[1]
    let hold = args.count > 2 ? Double(args[2]) ?? -1 : 0
    guard hold >= 0 else { fail("usage: disconnect DEVICE [HOLD_SECONDS]: HOLD_SECONDS must be a number >= 0") }
    // A second handle that keeps vivid from reconnecting until it is closed (see the usage above).
    var held: Int32 = -1
    if hold > 0 {
        held = open(path, O_RDWR)
        guard held >= 0 else { fail("disconnect \(path): cannot open it to hold it: \(String(cString: strerror(errno)))") }
    }
    let vividDisconnect: UInt32 = 0x00f0_f000 + 65  // VIVID_CID_DISCONNECT (a button: the value is ignored)
    do { try V4L2Control.set(device: path, id: vividDisconnect, value: 0) } catch { fail("disconnect \(path): \(error)") }
    if held >= 0 {
        Thread.sleep(forTimeInterval: hold)
        close(held)
    }
    print("CAMERA-CHECK: ok disconnect \(path) held=\(hold)s")
    exit(0)

case "bench-pattern":
    let (w, h) = size(1, (1280, 720))
    let fps = args.count > 2 ? Double(args[2]) ?? 30 : 30
    let seconds = args.count > 3 ? Double(args[3]) ?? 5 : 5
    let hold = args.count > 4 && args[4] == "hold"
    let source: TestPatternSource
    do { source = try TestPatternSource(width: w, height: h, fps: fps) } catch { fail("\(error)") }
    let collector = Collector(limit: Int.max, keep: false)
    let collectorHandle: @Sendable (FrameSourceEvent) -> Void = { event in
        if !hold, case .frame = event {
            collector.countFrame()
            return
        }
        collector.handle(event)
    }
    let cpu0 = cpuSeconds()
    let wall0 = Date()
    do { try source.start(collectorHandle) } catch { fail("\(error)") }
    Thread.sleep(forTimeInterval: seconds)
    source.stop()
    let cpu = cpuSeconds() - cpu0
    let wall = Date().timeIntervalSince(wall0)
    let frames = collector.snapshot.count
    print("CAMERA-CHECK: bench-pattern \(w)x\(h)@\(fps) frames=\(frames) in \(String(format: "%.2f", wall)) s"
          + " (\(String(format: "%.2f", Double(frames) / wall)) fps) cpu=\(String(format: "%.3f", cpu)) s"
          + " = \(String(format: "%.2f", 100 * cpu / wall))% of one core\(hold ? " (consumer holds frames: one copy per frame)" : "")")

default:
    fail("unknown mode \(mode)")
}
