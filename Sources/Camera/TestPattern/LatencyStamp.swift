/// The latency stamp of PROTOCOL.md section 6: 64 cells across the top 16 rows of a frame.
/// Cells 0-3 sync 1,0,1,0; cells 4-51 the capture time (unix ms mod 2^48, MSB first); cells 52-63
/// the frame counter mod 4096. Black (luma 16) is 0, white (luma 235) is 1.
public struct LatencyStamp: Sendable, Equatable, CustomStringConvertible {
    public static let cellCount = 64
    public static let rows = 16
    public static let black: UInt8 = 16
    public static let white: UInt8 = 235
    /// Row a reader samples, and the threshold above which a sample reads as 1.
    public static let sampleRow = 8
    public static let threshold: UInt8 = 128
    public static let syncBits: [Bool] = [true, false, true, false]
    public static let timeMask: UInt64 = (1 << 48) - 1
    public static let counterModulus = 4096

    /// Capture time, unix milliseconds modulo 2^48.
    public var captureTimeMs: UInt64
    /// Frame counter modulo 4096.
    public var counter: UInt16

    public init(captureTimeMs: UInt64, counter: UInt16) {
        self.captureTimeMs = captureTimeMs & Self.timeMask
        self.counter = counter % UInt16(Self.counterModulus)
    }

    /// The stamp of a frame captured at `unixMs` with sequence number `sequence`.
    public init(unixMs: Int64, sequence: UInt64) {
        self.init(captureTimeMs: UInt64(truncatingIfNeeded: unixMs), counter: UInt16(sequence % 4096))
    }

    public var description: String { "stamp(t=\(captureTimeMs) ms, #\(counter))" }

    /// The 64 cell values, cell 0 first.
    public var bits: [Bool] {
        var out = Self.syncBits
        out.reserveCapacity(64)
        for i in stride(from: 47, through: 0, by: -1) { out.append((captureTimeMs >> UInt64(i)) & 1 == 1) }
        for i in stride(from: 11, through: 0, by: -1) { out.append((counter >> UInt16(i)) & 1 == 1) }
        return out
    }

    /// First column of cell `i` in a frame `width` wide: floor(i*W/64).
    @inline(__always)
    public static func cellStart(_ i: Int, width: Int) -> Int { i * width / cellCount }

    /// The column a reader samples in cell `i`: floor((i+0.5)*W/64).
    @inline(__always)
    public static func sampleColumn(_ i: Int, width: Int) -> Int { (2 * i + 1) * width / (2 * cellCount) }

    /// How many frames went missing between two consecutive stamps' counters (0 when `next`
    /// directly follows `previous`), modulo 4096.
    public static func framesMissing(between previous: UInt16, and next: UInt16) -> Int {
        (Int(next) - Int(previous) - 1 + 2 * counterModulus) % counterModulus
    }

    // MARK: Drawing

    /// Draws the stamp into the top 16 rows of a luma plane. Only the cells whose value differs
    /// from `previous` are drawn when it is given (the rest of the stamp is already on the plane).
    public func draw(
        luma: UnsafeMutablePointer<UInt8>, width: Int, height: Int, stride: Int, previous: LatencyStamp? = nil
    ) {
        let rows = min(Self.rows, height)
        let new = bits
        let old = previous?.bits
        for i in 0..<Self.cellCount {
            if let old, old[i] == new[i] { continue }
            let start = Self.cellStart(i, width: width)
            let end = Self.cellStart(i + 1, width: width)
            guard end > start else { continue }
            let value = new[i] ? Self.white : Self.black
            for row in 0..<rows {
                (luma + row * stride + start).update(repeating: value, count: end - start)
            }
        }
    }

    // MARK: Reading

    /// Reads the stamp from a decoded luma plane. `pixelStride` is the distance between two
    /// horizontally adjacent luma samples (1 for planar formats, 2 for YUYV).
    public static func read(
        luma: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int, pixelStride: Int = 1
    ) throws(StampReadError) -> LatencyStamp {
        guard width >= cellCount, height > sampleRow else {
            throw .frameTooSmall(width: width, height: height)
        }
        let rowStart = sampleRow * stride
        guard rowStart + (width - 1) * pixelStride < luma.count else {
            throw .planeTooShort(bytes: luma.count, needed: rowStart + (width - 1) * pixelStride + 1)
        }
        var bits = [Bool]()
        bits.reserveCapacity(cellCount)
        var samples = [UInt8]()
        samples.reserveCapacity(cellCount)
        for i in 0..<cellCount {
            let sample = luma[rowStart + sampleColumn(i, width: width) * pixelStride]
            samples.append(sample)
            bits.append(sample > threshold)
        }
        guard Array(bits[0..<4]) == syncBits else {
            throw .syncMismatch(samples: Array(samples[0..<4]))
        }
        var time: UInt64 = 0
        for i in 4..<52 { time = (time << 1) | (bits[i] ? 1 : 0) }
        var counter: UInt16 = 0
        for i in 52..<64 { counter = (counter << 1) | (bits[i] ? 1 : 0) }
        return LatencyStamp(captureTimeMs: time, counter: counter)
    }

    /// Reads the stamp from a byte array holding a luma plane (or a whole I420/NV12/YUYV frame).
    public static func read(
        luma: [UInt8], width: Int, height: Int, stride: Int, pixelStride: Int = 1
    ) throws(StampReadError) -> LatencyStamp {
        let result: Result<LatencyStamp, StampReadError> = luma.withUnsafeBytes { raw in
            do throws(StampReadError) {
                return .success(try read(luma: raw, width: width, height: height, stride: stride, pixelStride: pixelStride))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Reads the stamp from a raw frame (I420, NV12 or YUYV).
    public static func read(from frame: Frame) throws(StampReadError) -> LatencyStamp {
        switch frame.format {
        case .i420, .nv12:
            return try read(luma: frame.bytes, width: frame.width, height: frame.height, stride: frame.width)
        case .yuyv:
            return try read(luma: frame.bytes, width: frame.width, height: frame.height, stride: 2 * frame.width, pixelStride: 2)
        case .mjpeg, .h264, .h265:
            throw .compressedFrame(frame.format)
        }
    }

    /// The capture time of this stamp, as a full unix time in ms, taking the upper bits from a
    /// reference time near it (a receiver's clock): the stamp keeps only the low 48 bits.
    public func unixMs(near reference: Int64) -> Int64 {
        let high = UInt64(truncatingIfNeeded: reference) & ~Self.timeMask
        var candidate = Int64(bitPattern: high | captureTimeMs)
        let span = Int64(1) << 48
        if candidate - reference > span / 2 { candidate -= span }
        if reference - candidate > span / 2 { candidate += span }
        return candidate
    }
}

/// Why a stamp could not be read.
public enum StampReadError: Error, Sendable, Equatable, CustomStringConvertible {
    case frameTooSmall(width: Int, height: Int)
    case planeTooShort(bytes: Int, needed: Int)
    /// Cells 0-3 did not read 1,0,1,0: not a stamped frame, or too damaged; the luma samples.
    case syncMismatch(samples: [UInt8])
    case compressedFrame(PixelFormat)

    public var description: String {
        switch self {
        case .frameTooSmall(let w, let h): return "frame \(w)x\(h) is too small for a stamp (needs 64x9 or more)"
        case .planeTooShort(let bytes, let needed): return "luma plane has \(bytes) bytes, needs \(needed)"
        case .syncMismatch(let samples): return "stamp sync cells read \(samples), expected white/black/white/black"
        case .compressedFrame(let format): return "cannot read a stamp from a \(format) frame without decoding it"
        }
    }
}
