import Foundation

/// An H.264 Annex-B file cut into access units, ready to loop: SPS and PPS are put in front of
/// every IDR that lacks them, so any IDR is a valid place to start decoding. Immutable and
/// shareable: one clip (one encode) serves every call of a fleet.
public struct H264Clip: Sendable {
    public struct AccessUnit: Sendable {
        /// Annex-B bytes (4-byte start codes).
        public var bytes: [UInt8]
        public var isKeyFrame: Bool
    }

    /// Access units in decoding order, starting at the first IDR.
    public let accessUnits: [AccessUnit]
    public let width: Int
    public let height: Int
    /// From the SPS VUI timing, when present.
    public let fps: Double?

    private static let cache = ClipCache<H264Clip>()

    /// Loads a clip once per process: devices naming the same file (unchanged since) share one
    /// parsed copy.
    public static func shared(contentsOfFile path: String) throws(CameraError) -> H264Clip {
        try cache.clip(at: path) { (path: String) throws(CameraError) in try H264Clip(contentsOfFile: path) }
    }

    public init(contentsOfFile path: String) throws(CameraError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .clip("cannot read \(path)")
        }
        try self.init(annexB: [UInt8](data), name: path)
    }

    public init(annexB data: [UInt8], name: String = "clip") throws(CameraError) {
        let units = H264AnnexB.nalUnits(data)
        guard !units.isEmpty else { throw .clip("\(name) holds no H.264 NAL units (not an Annex-B stream?)") }
        var sps: H264AnnexB.NALUnit?
        var pps: H264AnnexB.NALUnit?
        var info: H264SequenceInfo?
        var out: [AccessUnit] = []
        for au in H264AnnexB.accessUnits(units) {
            for unit in au {
                if unit.type == H264AnnexB.NALType.sps {
                    sps = unit
                    if info == nil { info = H264SequenceInfo(sps: unit) }
                }
                if unit.type == H264AnnexB.NALType.pps { pps = unit }
            }
            guard au.contains(where: \.isVCL) else { continue }
            let isIDR = au.contains { $0.type == H264AnnexB.NALType.idr }
            if out.isEmpty, !isIDR { continue }  // start at the first IDR
            var units = au.filter { $0.type != H264AnnexB.NALType.aud }
            if isIDR {
                guard let sps, let pps else { throw .clip("\(name): IDR before any SPS/PPS") }
                if !units.contains(where: { $0.type == H264AnnexB.NALType.sps }) { units.insert(sps, at: 0) }
                if !units.contains(where: { $0.type == H264AnnexB.NALType.pps }) {
                    let at = (units.firstIndex { $0.type == H264AnnexB.NALType.sps } ?? -1) + 1
                    units.insert(pps, at: at)
                }
            }
            out.append(AccessUnit(bytes: H264AnnexB.annexB(units), isKeyFrame: isIDR))
        }
        guard !out.isEmpty else { throw .clip("\(name) has no IDR picture to start from") }
        guard let info else { throw .clip("\(name): cannot parse its SPS") }
        accessUnits = out
        width = info.width
        height = info.height
        fps = info.fps
    }
}
