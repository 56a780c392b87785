/// Picks the format, size and rate to ask a camera for, from what it offers. Pure: tested with
/// made-up offers.
public enum V4L2Negotiation {
    /// What a source asks for.
    public struct Request: Sendable, Equatable {
        public var width: Int
        public var height: Int
        public var fps: Double
        /// A format to prefer above all (`.h264` or `.h265` asks for pass-through), or nil for the
        /// default order: MJPEG, YUYV, NV12, I420. H.264 and H.265 are only chosen when asked for.
        public var format: PixelFormat?

        public init(width: Int, height: Int, fps: Double, format: PixelFormat? = nil) {
            self.width = width
            self.height = height
            self.fps = fps
            self.format = format
        }
    }

    /// The decision.
    public struct Choice: Sendable, Equatable {
        public var fourcc: UInt32
        public var format: PixelFormat
        public var width: Int
        public var height: Int
        /// The rate to set: the requested one when offered, else the highest offered at that size.
        public var fps: Double
    }

    public static let defaultOrder: [PixelFormat] = [.mjpeg, .yuyv, .nv12, .i420]

    /// The order formats are preferred in for a request.
    public static func preference(for format: PixelFormat?) -> [PixelFormat] {
        guard let format else { return defaultOrder }
        return [format] + defaultOrder.filter { $0 != format }
    }

    /// Chooses: the size closest to the request first (exact wins), then whether the rate is
    /// offered, then the format preference; the camera's own formats before libv4l2's conversions.
    public static func choose(from offered: [V4L2FormatInfo], request: Request) -> Choice? {
        let order = preference(for: request.format)
        var best: (key: [Int], choice: Choice)?
        for info in offered {
            guard let format = info.pixelFormat, let rank = order.firstIndex(of: format) else { continue }
            guard let (w, h, rates) = closestSize(info.sizes, to: request) else { continue }
            let distance = abs(w - request.width) + abs(h - request.height)
            let rateMet = rates.supports(fps: request.fps)
            let fps = rateMet ? request.fps : (rates.highest ?? request.fps)
            let key = [info.isEmulated ? 1 : 0, distance, rateMet ? 0 : 1, rank]
            let choice = Choice(fourcc: info.fourcc, format: format, width: w, height: h, fps: fps)
            if best == nil || key.lexicographicallyPrecedes(best!.key) { best = (key, choice) }
        }
        return best?.choice
    }

    static func closestSize(_ sizes: V4L2FrameSizes, to request: Request) -> (Int, Int, V4L2FrameRates)? {
        switch sizes {
        case .discrete(let list):
            let pick = list.min { a, b in
                let da = abs(a.width - request.width) + abs(a.height - request.height)
                let db = abs(b.width - request.width) + abs(b.height - request.height)
                return da < db
            }
            return pick.map { ($0.width, $0.height, $0.rates) }
        case .range(let minW, let maxW, let stepW, let minH, let maxH, let stepH, let rates):
            func clamp(_ v: Int, _ lo: Int, _ hi: Int, _ step: Int) -> Int {
                let c = min(max(v, lo), hi)
                return lo + ((c - lo) / max(1, step)) * max(1, step)
            }
            return (clamp(request.width, minW, maxW, stepW), clamp(request.height, minH, maxH, stepH), rates)
        case .unknown:
            // The driver does not enumerate sizes: ask for the request and let S_FMT adjust it.
            return (request.width, request.height, .unknown)
        }
    }
}
