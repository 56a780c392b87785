/// Draws the synthetic camera's frames (I420): colour bars, a box that moves every frame, and the
/// latency stamp of PROTOCOL.md section 6 in the top 16 rows. Incremental: the bars are drawn
/// once; each frame only restores the box's old rectangle, draws its new one and redraws the stamp
/// cells that changed. The frame's bytes are the generator's canvas shared copy-on-write, so a
/// consumer that drops each frame before the next costs no copy at all.
public struct TestPatternGenerator: Sendable {
    public let width: Int
    public let height: Int
    /// Frames made so far; the next frame's sequence number (and stamp counter, mod 4096).
    public private(set) var sequence: UInt64 = 0

    private var canvas: [UInt8]
    private let chromaWidth: Int
    private let chromaHeight: Int
    private let uOffset: Int
    private let vOffset: Int
    /// One row of the background per plane (the bars depend on the column only).
    private let backgroundY: [UInt8]
    private let backgroundU: [UInt8]
    private let backgroundV: [UInt8]
    private let box: (width: Int, height: Int)?
    private var boxAt: (x: Int, y: Int)?
    private var lastStamp: LatencyStamp?

    /// 75% colour bars, BT.601 limited range (Y, U, V): white, yellow, cyan, green, magenta, red,
    /// blue, black.
    private static let bars: [(UInt8, UInt8, UInt8)] = [
        (180, 128, 128), (162, 44, 142), (131, 156, 44), (112, 72, 58),
        (84, 184, 198), (65, 100, 212), (35, 212, 114), (16, 128, 128),
    ]

    /// Width at least 64 (one column per stamp cell) and height at least 16 (the stamp's rows).
    public init(width: Int, height: Int) throws(CameraError) {
        guard width >= LatencyStamp.cellCount, height >= LatencyStamp.rows, width <= 16384, height <= 16384 else {
            throw .invalidConfig("test pattern size \(width)x\(height): needs at least 64x16 and at most 16384x16384")
        }
        self.width = width
        self.height = height
        chromaWidth = (width + 1) / 2
        chromaHeight = (height + 1) / 2
        uOffset = width * height
        vOffset = uOffset + chromaWidth * chromaHeight
        canvas = [UInt8](repeating: 0, count: vOffset + chromaWidth * chromaHeight)
        let bars = Self.bars
        backgroundY = (0..<width).map { bars[$0 * bars.count / width].0 }
        let cw = chromaWidth
        backgroundU = (0..<cw).map { bars[min(2 * $0, width - 1) * bars.count / width].1 }
        backgroundV = (0..<cw).map { bars[min(2 * $0, width - 1) * bars.count / width].2 }
        let free = height - LatencyStamp.rows
        if free >= 8 {
            let bw = max(8, (width / 8) & ~1)
            let bh = max(4, min(free, height / 6) & ~1)
            box = (bw, bh)
        } else {
            box = nil
        }
        drawBackground()
    }

    /// Makes the next frame, stamped with `unixMs` and the current sequence number.
    public mutating func nextFrame(unixMs: Int64, timestampNs: UInt64) -> Frame {
        let seq = sequence
        sequence += 1
        let stamp = LatencyStamp(unixMs: unixMs, sequence: seq)
        let position = boxPosition(seq)
        let previousBox = boxAt
        let previousStamp = lastStamp
        let (w, h, cw, uOff, vOff) = (width, height, chromaWidth, uOffset, vOffset)
        let size = box
        canvas.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            if let size, let old = previousBox {
                Self.restore(base, rect: (old.x, old.y, size.width, size.height), width: w, height: h,
                             cw: cw, uOff: uOff, vOff: vOff, bgY: backgroundY, bgU: backgroundU, bgV: backgroundV)
            }
            if let size, let position {
                // A white box with a black border: visible on every bar.
                Self.fill(base, rect: (position.x, position.y, size.width, size.height), width: w, height: h,
                          cw: cw, uOff: uOff, vOff: vOff, yuv: (16, 128, 128))
                let border = min(4, size.width / 4, size.height / 4)
                Self.fill(base, rect: (position.x + border, position.y + border, size.width - 2 * border,
                                       size.height - 2 * border), width: w, height: h,
                          cw: cw, uOff: uOff, vOff: vOff, yuv: (235, 128, 128))
            }
            stamp.draw(luma: base, width: w, height: h, stride: w, previous: previousStamp)
        }
        boxAt = position
        lastStamp = stamp
        return Frame(format: .i420, width: width, height: height, bytes: canvas,
                     captureTimeMs: unixMs, timestampNs: timestampNs, sequence: seq, isKeyFrame: true)
    }

    /// The box bounces around the area under the stamp, a few pixels a frame.
    private func boxPosition(_ seq: UInt64) -> (x: Int, y: Int)? {
        guard let box else { return nil }
        let rangeX = width - box.width
        let rangeY = height - LatencyStamp.rows - box.height
        func bounce(_ step: UInt64, _ range: Int) -> Int {
            guard range > 0 else { return 0 }
            let period = UInt64(2 * range)
            let p = Int(step % period)
            return p <= range ? p : 2 * range - p
        }
        let stepX = max(2, width / 160)
        let stepY = max(2, height / 180)
        let x = bounce(seq &* UInt64(stepX), rangeX) & ~1
        let y = LatencyStamp.rows + (bounce(seq &* UInt64(stepY), rangeY) & ~1)
        return (x, y)
    }

    private mutating func drawBackground() {
        let (w, h, cw, ch, uOff, vOff) = (width, height, chromaWidth, chromaHeight, uOffset, vOffset)
        let stampChromaRows = LatencyStamp.rows / 2
        canvas.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            backgroundY.withUnsafeBufferPointer { row in
                guard let src = row.baseAddress else { return }
                for y in 0..<h { (base + y * w).update(from: src, count: w) }
            }
            for (offset, background) in [(uOff, backgroundU), (vOff, backgroundV)] {
                background.withUnsafeBufferPointer { row in
                    guard let src = row.baseAddress else { return }
                    for y in 0..<ch {
                        // Neutral chroma behind the stamp, so its cells are pure black and white.
                        if y < stampChromaRows {
                            (base + offset + y * cw).update(repeating: 128, count: cw)
                        } else {
                            (base + offset + y * cw).update(from: src, count: cw)
                        }
                    }
                }
            }
        }
        // The stamp area starts black; cells are drawn on the first frame.
        canvas.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            for y in 0..<min(LatencyStamp.rows, h) { (base + y * w).update(repeating: LatencyStamp.black, count: w) }
        }
        lastStamp = nil
    }

    private static func fill(
        _ base: UnsafeMutablePointer<UInt8>, rect: (Int, Int, Int, Int), width: Int, height: Int,
        cw: Int, uOff: Int, vOff: Int, yuv: (UInt8, UInt8, UInt8)
    ) {
        let (x, y, w, h) = rect
        let x1 = min(width, x + w), y1 = min(height, y + h)
        guard x1 > x, y1 > y else { return }
        for row in y..<y1 { (base + row * width + x).update(repeating: yuv.0, count: x1 - x) }
        let cx = x / 2, cx1 = (x1 + 1) / 2
        for row in (y / 2)..<((y1 + 1) / 2) {
            (base + uOff + row * cw + cx).update(repeating: yuv.1, count: cx1 - cx)
            (base + vOff + row * cw + cx).update(repeating: yuv.2, count: cx1 - cx)
        }
    }

    private static func restore(
        _ base: UnsafeMutablePointer<UInt8>, rect: (Int, Int, Int, Int), width: Int, height: Int,
        cw: Int, uOff: Int, vOff: Int, bgY: [UInt8], bgU: [UInt8], bgV: [UInt8]
    ) {
        let (x, y, w, h) = rect
        let x1 = min(width, x + w), y1 = min(height, y + h)
        guard x1 > x, y1 > y else { return }
        bgY.withUnsafeBufferPointer { row in
            guard let src = row.baseAddress else { return }
            for r in y..<y1 { (base + r * width + x).update(from: src + x, count: x1 - x) }
        }
        let cx = x / 2, cx1 = (x1 + 1) / 2
        bgU.withUnsafeBufferPointer { u in
            bgV.withUnsafeBufferPointer { v in
                guard let us = u.baseAddress, let vs = v.baseAddress else { return }
                for r in (y / 2)..<((y1 + 1) / 2) {
                    (base + uOff + r * cw + cx).update(from: us + cx, count: cx1 - cx)
                    (base + vOff + r * cw + cx).update(from: vs + cx, count: cx1 - cx)
                }
            }
        }
    }
}
