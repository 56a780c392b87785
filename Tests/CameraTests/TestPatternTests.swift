import Camera
import CameraTestSupport
import Testing

@Suite("Test pattern and latency stamp")
struct TestPatternTests {
    @Test("the stamp's geometry and values follow PROTOCOL.md section 6 exactly", arguments: [(1280, 720), (641, 17), (64, 16), (1919, 1079)])
    func stampLayout(size: (Int, Int)) async throws {
        let (w, h) = size
        var generator = try TestPatternGenerator(width: w, height: h)
        let unixMs: Int64 = 0x0123_4567_89AB  // 48 bits
        _ = generator.nextFrame(unixMs: 1, timestampNs: 0)  // frame 0
        let frame = generator.nextFrame(unixMs: unixMs, timestampNs: 1)
        #expect(frame.sequence == 1)
        #expect(frame.bytes.count == w * h + 2 * ((w + 1) / 2) * ((h + 1) / 2))
        let bits = LatencyStamp(unixMs: unixMs, sequence: 1).bits
        #expect(Array(bits[0..<4]) == [true, false, true, false])
        // Every pixel of every cell, all 16 rows, is exactly 16 or 235.
        for i in 0..<64 {
            let start = i * w / 64, end = (i + 1) * w / 64
            let value: UInt8 = bits[i] ? 235 : 16
            for row in 0..<16 {
                for x in start..<end where frame.bytes[row * w + x] != value {
                    Issue.record("cell \(i) row \(row) column \(x) is \(frame.bytes[row * w + x]), expected \(value)")
                    return
                }
            }
        }
        // Chroma behind the stamp is neutral.
        let cw = (w + 1) / 2
        #expect(frame.bytes[(w * h)..<(w * h + 8 * cw)].allSatisfy { $0 == 128 })
        let stamp = try LatencyStamp.read(from: frame)
        #expect(stamp == LatencyStamp(captureTimeMs: 0x0123_4567_89AB, counter: 1))
    }

    @Test("the counter starts at 0, counts every frame and wraps at 4096; time keeps 48 bits")
    func counterAndTime() async throws {
        var generator = try TestPatternGenerator(width: 320, height: 180)
        let base: Int64 = 1_732_200_000_123
        for n in 0..<4100 {
            let frame = generator.nextFrame(unixMs: base + Int64(n), timestampNs: UInt64(n))
            if n < 5 || n > 4090 {
                let stamp = try LatencyStamp.read(from: frame)
                #expect(stamp.counter == UInt16(n % 4096))
                #expect(stamp.captureTimeMs == UInt64(base + Int64(n)) & LatencyStamp.timeMask)
                #expect(stamp.unixMs(near: Clocks.unixMs()) == base + Int64(n))
            }
        }
        #expect(LatencyStamp.framesMissing(between: 4095, and: 0) == 0)
        #expect(LatencyStamp.framesMissing(between: 10, and: 13) == 2)
    }

    @Test("the pattern moves: consecutive frames differ outside the stamp")
    func moves() async throws {
        var generator = try TestPatternGenerator(width: 640, height: 360)
        let a = generator.nextFrame(unixMs: 5, timestampNs: 0)
        let b = generator.nextFrame(unixMs: 5, timestampNs: 0)
        let body = (16 * 640)..<(640 * 360)
        #expect(a.bytes[body] != b.bytes[body])
        // Copy-on-write: the first frame was not changed by drawing the second.
        #expect(try LatencyStamp.read(from: a).counter == 0)
    }

    @Test("a frame without a stamp is a typed error, not a wrong value")
    func readErrors() async throws {
        let gray = [UInt8](repeating: 128, count: 640 * 360)
        #expect(throws: StampReadError.self) { try LatencyStamp.read(luma: gray, width: 640, height: 360, stride: 640) }
        #expect(throws: StampReadError.frameTooSmall(width: 32, height: 360)) {
            try LatencyStamp.read(luma: gray, width: 32, height: 360, stride: 32)
        }
        #expect(throws: StampReadError.self) { try LatencyStamp.read(luma: [1, 2, 3], width: 640, height: 360, stride: 640) }
        #expect(throws: CameraError.self) { try TestPatternGenerator(width: 63, height: 100) }
    }

    @Test("real-time pacing on absolute deadlines, counter from 0")
    func pacing() async throws {
        let source = try TestPatternSource(width: 320, height: 180, fps: 50)
        let rec = EventRecorder()
        let t0 = Clocks.monotonicNs()
        try source.start(rec.sink)
        #expect(await rec.waitForFrames(26))
        let elapsed = Double(Clocks.monotonicNs() - t0) / 1e9
        source.stop()
        let frames = rec.frames
        #expect(frames.first?.sequence == 0)
        #expect(frames.map(\.sequence) == Array(0..<UInt64(frames.count)))
        // 25 intervals of 20 ms: never sooner than 0.5 s (no frame early). How much later is the
        // machine's load, not the source's: speed is for `ipcemu bench`, not a unit test.
        #expect(elapsed > 0.45)
        // Ticks sit on the 20 ms grid (absolute schedule); a loaded machine may skip ticks but
        // never delivers a frame early, and the counter has no gaps (it counts captured frames).
        #expect(frames.allSatisfy { $0.timestampNs % 20_000_000 == 0 })
        #expect(zip(frames, frames.dropFirst()).allSatisfy { $0.timestampNs < $1.timestampNs })
        #expect(frames[25].timestampNs >= 500_000_000)
        #expect(elapsed + 0.005 >= Double(frames[25].timestampNs) / 1e9)
        for frame in frames.prefix(26) {
            let stamp = try LatencyStamp.read(from: frame)
            #expect(stamp.counter == UInt16(frame.sequence))
            #expect(stamp.captureTimeMs == UInt64(frame.captureTimeMs))
        }
        #expect(rec.statuses.first == .live(description: "test pattern 320x180@50"))
        #expect(rec.statuses.last == .stopped)
    }

    @Test("events() delivers status then frames as an async stream; leaving the loop stops the source")
    func asyncEvents() async throws {
        let source = try TestPatternSource(width: 128, height: 32, fps: 30)
        var frames: [Frame] = []
        var statuses: [FrameSourceStatus] = []
        // A buffer of over two minutes of frames: at the start of a parallel `swift test` hundreds
        // of tests wait for the same two threads, and this reader may get its turn seconds late.
        for await event in try source.events(bufferingNewest: 4096) {
            switch event {
            case .status(let s): statuses.append(s)
            case .frame(let f): frames.append(f)
            }
            if frames.count == 3 { break }
        }
        #expect(statuses == [.live(description: "test pattern 128x32@30")])
        #expect(frames.map(\.sequence) == [0, 1, 2])
        #expect(throws: CameraError.alreadyStarted) { try source.start { _ in } }
    }
}
