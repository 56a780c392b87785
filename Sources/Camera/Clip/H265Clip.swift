import Foundation

/// An H.265 Annex-B file cut into access units, ready to loop and pass through to the `fmp4Stream`
/// data channel (PROTOCOL.md 7) without encoding: VPS, SPS and PPS are put in front of every key
/// frame (IRAP) that lacks them, so any key frame is a valid place to start decoding and the fMP4
/// writer finds its `hvcC` parameter sets in band. Immutable and shareable like `H264Clip`.
///
/// The NAL header is 2 bytes, type = (byte0 >> 1) & 0x3F (ITU-T H.265 7.3.1.2). A new access unit
/// starts at an access unit delimiter, at VPS/SPS/PPS/prefix SEI after a picture's slices, and at a
/// slice with first_slice_segment_in_pic_flag (the first bit after the header) set.
public struct H265Clip: Sendable {
    public enum NALType {
        public static let vps: UInt8 = 32
        public static let sps: UInt8 = 33
        public static let pps: UInt8 = 34
        public static let aud: UInt8 = 35
        public static let prefixSEI: UInt8 = 39
        /// Key frames: BLA, IDR and CRA pictures (16...21).
        public static let irap: ClosedRange<UInt8> = 16...21
    }

    public typealias AccessUnit = H264Clip.AccessUnit

    /// Access units in decoding order, starting at the first key frame.
    public let accessUnits: [AccessUnit]

    private static let cache = ClipCache<H265Clip>()

    /// Loads a clip once per process (devices naming the same unchanged file share one copy).
    public static func shared(contentsOfFile path: String) throws(CameraError) -> H265Clip {
        try cache.clip(at: path) { (path: String) throws(CameraError) in try H265Clip(contentsOfFile: path) }
    }

    public init(contentsOfFile path: String) throws(CameraError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .clip("cannot read \(path)")
        }
        try self.init(annexB: [UInt8](data), name: path)
    }

    static func type(_ unit: H264AnnexB.NALUnit) -> UInt8? {
        guard unit.bytes.count >= 2, let first = unit.bytes.first else { return nil }
        return (first >> 1) & 0x3F
    }

    /// Whether the first NAL unit of `data` looks like H.265 rather than H.264: a 2-byte header
    /// with forbidden bit 0, layer 0, temporal id + 1 non-zero, and type VPS, SPS, PPS, AUD or
    /// prefix SEI (the first bytes 0x40, 0x42, 0x44, 0x46 or 0x4E then 0x01 are not a valid H.264
    /// start: they read as types 0, 2, 4, 6 (SEI with nal_ref_idc != 0) or 14).
    public static func looksLikeH265(_ data: [UInt8]) -> Bool {
        guard let first = H264AnnexB.nalUnits(Array(data.prefix(4096))).first, first.bytes.count >= 2 else { return false }
        let b0 = first.bytes[first.bytes.startIndex], b1 = first.bytes[first.bytes.startIndex + 1]
        let type = (b0 >> 1) & 0x3F
        return b0 & 0x81 == 0 && b1 & 0xF8 == 0 && b1 & 0x07 != 0
            && [NALType.vps, NALType.sps, NALType.pps, NALType.aud, NALType.prefixSEI].contains(type)
    }

    public init(annexB data: [UInt8], name: String = "clip") throws(CameraError) {
        let units = H264AnnexB.nalUnits(data)
        guard !units.isEmpty else { throw .clip("\(name) holds no NAL units (not an Annex-B stream?)") }
        for unit in units {
            guard let first = unit.bytes.first, unit.bytes.count >= 2, first & 0x80 == 0 else {
                throw .clip("\(name): a NAL unit with a bad H.265 header (forbidden bit set or shorter than 2 bytes)")
            }
        }
        var parameterSets = H265ParameterSetCache()
        var out: [AccessUnit] = []
        for au in Self.accessUnits(units) {
            parameterSets.remember(au)
            guard au.contains(where: { (Self.type($0) ?? 63) < 32 }) else { continue }
            let isKey = au.contains { NALType.irap.contains(Self.type($0) ?? 0) }
            if out.isEmpty, !isKey { continue }  // start at the first key frame
            var units = au.filter { Self.type($0) != NALType.aud }
            if isKey {
                // Parameter sets first, in the order VPS, SPS, PPS (what the fMP4 writer expects).
                guard let completed = parameterSets.completingKeyFrame(units) else {
                    throw .clip("\(name): key frame before any VPS/SPS/PPS")
                }
                units = completed
            }
            out.append(AccessUnit(bytes: H264AnnexB.annexB(units), isKeyFrame: isKey))
        }
        guard !out.isEmpty else { throw .clip("\(name) has no H.265 key frame (IRAP picture) to start from") }
        accessUnits = out
    }

    /// Groups NAL units into access units (H.265 7.4.2.4.4).
    static func accessUnits(_ units: [H264AnnexB.NALUnit]) -> [[H264AnnexB.NALUnit]] {
        var out: [[H264AnnexB.NALUnit]] = []
        var current: [H264AnnexB.NALUnit] = []
        var currentHasPicture = false
        for unit in units {
            let t = type(unit) ?? 63
            let isVCL = t < 32
            let startsNew: Bool
            if t == NALType.aud {
                startsNew = !current.isEmpty
            } else if isVCL {
                let firstSlice = unit.bytes.count > 2 && unit.bytes[unit.bytes.startIndex + 2] & 0x80 != 0
                startsNew = currentHasPicture && firstSlice
            } else if [NALType.vps, NALType.sps, NALType.pps, NALType.prefixSEI].contains(t) || (41...44).contains(t) || (48...55).contains(t) {
                startsNew = currentHasPicture
            } else {
                startsNew = false
            }
            if startsNew {
                out.append(current)
                current = []
                currentHasPicture = false
            }
            current.append(unit)
            if isVCL { currentHasPicture = true }
        }
        if !current.isEmpty { out.append(current) }
        return out
    }
}
