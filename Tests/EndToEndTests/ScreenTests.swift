@testable import AppSimulator
import CallEngine
import DeviceProfile
import Emulator
import Foundation
import IPCWire
import Testing
import TestSupport
import WebRTCLink

/// The device's screen and sound (profile `display` and `audio`, issue 14 part 2): the app sends
/// its stamped test pattern (PROTOCOL.md 6) and a 440 Hz tone on a two-way call; the device records
/// it to a file, shows it in a window (under Xvfb), plays the tone on an ALSA PCM and sends its
/// own voice from an ALSA capture PCM. Each check reads back what the output got.
extension EndToEnd {
    @Suite("The device's screen and sound (display, audio)")
    struct Screen {
        static let appVideo = VideoFormat(width: 320, height: 240, fps: 15)

        static func twoWay(_ p: inout DeviceProfile) {
            p.capabilities.video?.main = DeviceProfile.StreamFormat(width: 320, height: 240, fps: 15)
            p.capabilities.liveView = false
            p.behaviour.answerPolicy = .answer(afterSeconds: 0)
        }

        static func until(_ timeout: Duration, _ condition: () async -> Bool) async -> Bool {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if await condition() { return true }
                try? await Task.sleep(for: .milliseconds(50))
            }
            return false
        }

        static func temporaryFolder() throws -> String {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ipcemu-screen-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            return dir
        }

        /// A call from alice with two-way video (and voice); runs `during` while at least `frames`
        /// of the app's frames reached the device, then hangs up and waits for the link to close.
        static func twoWayCall(
            _ h: CallHarness, frames: Int, during: (String) async throws -> Void = { _ in }
        ) async throws -> (sessionId: String, received: LinkStatistics) {
            let (alice, events) = try await h.app("user-alice")
            try await alice.startCall(devId: h.devId, timeoutSeconds: 10)
            #expect(await events.first { $0.receivedEvent(.answer) } != nil)
            let sid = try await alice.openVideo(sendVideo: appVideo)
            let arrived = await until(.seconds(30)) { (await h.device.mediaStats(sessionId: sid)?.videoFramesReceived ?? 0) >= frames }
            let got = await h.device.mediaStats(sessionId: sid)?.videoFramesReceived ?? 0
            #expect(arrived, "the device got \(got) of the app's frames")
            let received = try #require(await h.device.mediaStats(sessionId: sid))
            try await during(sid)
            try await alice.hangUp()
            #expect(await until(.seconds(10)) { await h.device.mediaLinks.isEmpty })
            return (sid, received)
        }

        /// Reads the stamps of luma frames (PROTOCOL.md 6) the way the app simulator does.
        static func stamps(ofFrames luma: [UInt8], width: Int, height: Int) -> VideoStats {
            var stats = VideoStats()
            let size = width * height
            var offset = 0
            while offset + size <= luma.count {
                stats.add(luma: Array(luma[offset..<(offset + size)]), width: width, height: height, stride: width,
                          arrivalUnixNanos: 0, answeredAt: nil)
                offset += size
            }
            return stats
        }

        @Test("display file: the app's stamped video recorded to Matroska and MP4, decoded back with every stamp read",
              .timeLimit(.minutes(8)), arguments: ["mkv", "mp4"])
        func recording(container: String) async throws {
            let dir = try Self.temporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            try await withHarness(edit: {
                Self.twoWay(&$0)
                $0.display = .file(DeviceProfile.Recording(pathTemplate: dir + "/calls/{devId}-{sessionId}.\(container)"))
            }) { h in
                let (sid, received) = try await Self.twoWayCall(h, frames: 45)
                let file = dir + "/calls/\(h.devId)-\(sid).\(container)"
                #expect(FileManager.default.fileExists(atPath: file), "no recording at \(file)")
                // Decoded back by GStreamer alone: demuxer, decoder, luma.
                let raw = dir + "/frames.gray"
                let gst = try #require(onPath("gst-launch-1.0"), "gst-launch-1.0 (gstreamer1.0-tools) is needed")
                let run = try await runTool(gst, ["-q", "filesrc", "location=\(file)", "!", "decodebin", "!", "videoconvert", "!",
                                            "video/x-raw,format=GRAY8", "!", "filesink", "location=\(raw)"])
                #expect(run.status == 0, "decoding \(file): \(run.output)")
                let luma = [UInt8](FileManager.default.contents(atPath: raw) ?? Data())
                let stats = Self.stamps(ofFrames: luma, width: Self.appVideo.width, height: Self.appVideo.height)
                #expect(stats.framesDecoded >= 40, "frames in the recording: \(stats.framesDecoded)")
                #expect(stats.stampErrors == 0 && stats.stampsRead == stats.framesDecoded, "\(stats.summary)")
                // Frames in order, as the app captured them (the counter never goes back), and
                // about as many as the device received.
                let counters = stats.stamps.map(\.counter)
                #expect(zip(counters, counters.dropFirst()).allSatisfy { $0 < $1 }, "counters: \(counters.prefix(20))...")
                #expect(stats.framesDecoded >= received.videoFramesReceived - 5, "recorded \(stats.framesDecoded), received \(received.videoFramesReceived) earlier")
            }
        }

        @Test("display window under Xvfb: screenshots of the device's window read as the app's stamps, advancing",
              .timeLimit(.minutes(8)), .enabled(if: onPath("Xvfb") != nil && onPath("xwd") != nil),
              .heavy)
        func window() async throws {
            try await Self.windowCall { _, xvfb, _ in
                var counters: [UInt16] = []
                for _ in 0..<3 {
                    let shot = try await xvfb.screenshotLuma(width: Self.appVideo.width, height: Self.appVideo.height)
                    let stats = Self.stamps(ofFrames: shot, width: Self.appVideo.width, height: Self.appVideo.height)
                    #expect(stats.stampsRead == 1, "the window's top rows are not a stamp: \(stats.summary)")
                    if let stamp = stats.stamps.first {
                        counters.append(stamp.counter)
                        // Shown live: drawn at most a few seconds ago (one clock).
                        let age = Int64(Date().timeIntervalSince1970 * 1000) - stamp.captureUnixMs
                        #expect(age >= 0 && age < 5000, "stamp age \(age) ms")
                    }
                    try await Task.sleep(for: .milliseconds(400))
                }
                #expect(counters.count == 3 && zip(counters, counters.dropFirst()).allSatisfy { $0 < $1 },
                        "the window shows new frames: \(counters)")
            }
        }

        /// A two-way call whose device shows the app's video in a window on a private Xvfb;
        /// `during` runs while the call's video flows.
        static func windowCall(_ during: (CallHarness, XvfbServer, String) async throws -> Void) async throws {
            let xvfb = try await XvfbServer.start()
            defer { xvfb.stop() }
            try await withHarness(edit: {
                Self.twoWay(&$0)
                $0.display = .window(sink: "ximagesink", xDisplay: xvfb.display)
            }) { h in
                _ = try await Self.twoWayCall(h, frames: 30) { sid in try await during(h, xvfb, sid) }
            }
        }

        @Test("audio alsa: the app's tone plays on an ALSA file PCM, and the device's voice comes from an ALSA capture PCM",
              .timeLimit(.minutes(8)), .enabled(if: FileManager.default.fileExists(atPath: "/usr/share/alsa/alsa.conf")))
        func alsa() async throws {
            let dir = try Self.temporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            // ALSA's `file` PCM (alsa.conf): what is played or captured through the `null` PCM is
            // also written to FILE. Capture from `null` is silence, but it is read through ALSA.
            let played = dir + "/played.raw", captured = dir + "/captured.raw"
            try await withHarness(edit: {
                Self.twoWay(&$0)
                $0.audio = DeviceProfile.Sound(source: .alsa(device: "file:FILE='\(captured)',FORMAT=raw"),
                                               playback: .alsa(device: "file:FILE='\(played)',FORMAT=raw"))
            }) { h in
                var capturedDuringCall = 0
                var appAudioPackets = 0
                _ = try await Self.twoWayCall(h, frames: 30) { sid in
                    #expect(await Self.until(.seconds(10)) {
                        (try? FileManager.default.attributesOfItem(atPath: played)[.size] as? Int).flatMap { $0 } ?? 0 > 16_000
                    }, "the app's audio was not played on the ALSA PCM")
                    capturedDuringCall = (try? FileManager.default.attributesOfItem(atPath: captured)[.size] as? Int).flatMap { $0 } ?? 0
                    appAudioPackets = await h.apps.first?.videoLinkStatistics(sessionId: sid)?.stats.audioPacketsReceived ?? 0
                }
                #expect(capturedDuringCall > 0, "nothing was captured from the ALSA PCM")
                #expect(appAudioPackets > 20, "the app received \(appAudioPackets) audio packets from the device")
                // What was played holds the app's 440 Hz tone (S16LE, 8 kHz mono from the
                // decoder): loud 25 ms pieces crossing zero about 0.11 times a sample. (The null
                // PCM takes everything at once, so the sink's ring buffer writes silence between.)
                let bytes = [UInt8](FileManager.default.contents(atPath: played) ?? Data())
                let samples = stride(from: 0, to: bytes.count - 1, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
                var rates: [Double] = []
                for start in stride(from: 0, to: samples.count - 200, by: 200) {
                    let piece = samples[start..<(start + 200)]
                    let rms = (piece.reduce(0.0) { $0 + Double($1) * Double($1) } / 200).squareRoot()
                    guard rms > 1000, piece.allSatisfy({ $0 != 0 }) || piece.filter({ $0 == 0 }).count < 10 else { continue }
                    rates.append(Double(zip(piece, piece.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count) / 199)
                }
                #expect(rates.count >= 20, "loud pieces in the played audio: \(rates.count) of \(samples.count / 200)")
                let median = rates.sorted()[safe: rates.count / 2] ?? 0
                #expect(abs(median - 880.0 / 8000.0) < 0.02, "zero crossings per sample \(median) (440 Hz at 8 kHz: 0.11)")
            }
        }

        @Test("a window that cannot open (no such X display) is logged and the call goes on", .timeLimit(.minutes(8)))
        func windowUnavailable() async throws {
            try await withHarness(edit: {
                Self.twoWay(&$0)
                $0.display = .window(sink: "ximagesink", xDisplay: ":1999")
            }) { h in
                let (_, received) = try await Self.twoWayCall(h, frames: 30) { _ in
                    #expect(await Self.until(.seconds(20)) {
                        h.log.text.contains("display window (ximagesink on :1999): the window process ended")
                    }, "the window's end was not logged:\n\(h.log.text)")
                }
                #expect(received.videoFramesReceived >= 30)
            }
        }

        @Test("the X server going away mid-call ends the window, never the device: the call goes on",
              .timeLimit(.minutes(8)), .enabled(if: onPath("Xvfb") != nil), .heavy)
        func xServerGoesAway() async throws {
            try await Self.windowCall { h, xvfb, sid in
                // The window is drawn by a child of this process on that display.
                let window = Self.windowChildren(display: xvfb.display)
                #expect(window.count == 1, "window processes on \(xvfb.display): \(window)")
                xvfb.stop()
                // In-process Xlib would have ended this test process here (exit 1).
                #expect(await Self.until(.seconds(20)) {
                    h.log.text.contains("display window (ximagesink on \(xvfb.display)): the window process ended")
                }, "the window's end was not logged:\n\(h.log.text)")
                #expect(window.allSatisfy { !FileManager.default.fileExists(atPath: "/proc/\($0)") }, "not reaped: \(window)")
                let before = await h.device.mediaStats(sessionId: sid)?.videoFramesReceived ?? 0
                #expect(await Self.until(.seconds(20)) {
                    (await h.device.mediaStats(sessionId: sid)?.videoFramesReceived ?? 0) >= before + 30
                }, "the device stopped receiving the app's video after the X server went away")
            }
        }

        /// Child processes of this one running gst-launch-1.0 with `display=<display>`.
        static func windowChildren(display: String) -> [Int32] {
            let me = getpid()
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            return entries.compactMap(Int32.init).filter { pid in
                guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                      let close = stat.lastIndex(of: ")") else { return false }
                let fields = stat[stat.index(after: close)...].split(separator: " ")
                guard fields.count > 2, Int32(fields[1]) == me,
                      let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
                let args = cmdline.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
                return args.first?.hasSuffix("gst-launch-1.0") == true && args.contains("display=\(display)")
            }
        }
    }
}

/// A private X server (`Xvfb -displayfd`): a free display number, torn down at the end.
final class XvfbServer: @unchecked Sendable {
    let process: Process
    let display: String

    static func start() async throws -> XvfbServer {
        // A display number nobody uses (no socket, no lock file), then wait for its socket.
        let taken = { (n: Int) in
            FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(n)") || FileManager.default.fileExists(atPath: "/tmp/.X\(n)-lock")
        }
        let number = try #require((100 + Int.random(in: 0..<400)..<1000).first { !taken($0) }, "no free X display number")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(onPath("Xvfb")))
        process.arguments = [":\(number)", "-screen", "0", "640x480x24", "-nolisten", "tcp"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let server = XvfbServer(process: process, display: ":\(number)")
        for _ in 0..<100 where !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)") {
            try await Task.sleep(for: .milliseconds(50))
        }
        try #require(FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)"), "Xvfb :\(number) did not start")
        return server
    }

    private init(process: Process, display: String) {
        self.process = process
        self.display = display
    }

    func stop() {
        // SIGKILL: a child of the test runner may inherit SIGTERM blocked (seen here: Xvfb lived on).
        guard process.isRunning else { return }  // stopped already (a second kill could hit a reused pid)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// The top-left `width` x `height` of the screen (where an undecorated window opens) as luma,
    /// from `xwd -root` (its ZPixmap, 32 bits per pixel).
    func screenshotLuma(width: Int, height: Int) async throws -> [UInt8] {
        let run = try await runTool(try #require(onPath("xwd")), ["-root", "-silent", "-display", display], binary: true)
        try #require(run.status == 0, "xwd: \(run.output)")
        return try XWDImage(run.data).luma(width: width, height: height)
    }
}

/// An X Window Dump (XWD version 7, ZPixmap, 24/32-bit true colour): enough to read pixels.
struct XWDImage {
    let width: Int, height: Int, bytesPerLine: Int, bitsPerPixel: Int, lsbFirst: Bool
    let pixels: ArraySlice<UInt8>

    init(_ data: [UInt8]) throws {
        func field(_ i: Int) throws -> Int {
            try #require(data.count >= (i + 1) * 4, "short XWD header")
            return data[(i * 4)..<(i * 4 + 4)].reduce(0) { $0 << 8 | Int($1) }
        }
        let headerSize = try field(0)
        try #require(try field(1) == 7 && field(2) == 2, "not an XWD v7 ZPixmap")
        width = try field(4)
        height = try field(5)
        lsbFirst = try field(7) == 0
        bitsPerPixel = try field(11)
        bytesPerLine = try field(12)
        let colours = try field(19)
        let start = headerSize + colours * 12
        try #require(bitsPerPixel == 32 && data.count >= start + bytesPerLine * height, "unexpected XWD layout")
        pixels = data[start...]
    }

    func luma(width w: Int, height h: Int) throws -> [UInt8] {
        try #require(w <= width && h <= height)
        var out = [UInt8](repeating: 0, count: w * h)
        let base = pixels.startIndex
        for y in 0..<h {
            for x in 0..<w {
                let p = base + y * bytesPerLine + x * 4
                let (r, g, b) = lsbFirst ? (pixels[p + 2], pixels[p + 1], pixels[p]) : (pixels[p + 1], pixels[p + 2], pixels[p + 3])
                // RGB back to video-range luma (BT.601), as the stamp expects (16 black, 235 white).
                let yFull = (299 * Int(r) + 587 * Int(g) + 114 * Int(b)) / 1000
                out[y * w + x] = UInt8(16 + yFull * 219 / 255)
            }
        }
        return out
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}

func onPath(_ name: String) -> String? {
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let path = "\(dir)/\(name)"
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return nil
}

/// Runs a program to its end: status, and its output (stdout and stderr together; or stdout
/// alone as bytes with `binary`).
func runTool(_ path: String, _ arguments: [String], binary: Bool = false) async throws -> (status: Int32, output: String, data: [UInt8]) {
    let run = try await runProgram(path, arguments, mergeOutput: !binary, discardStderr: binary)
    return (run.status, binary ? "" : run.stdout, run.stdoutBytes)
}
