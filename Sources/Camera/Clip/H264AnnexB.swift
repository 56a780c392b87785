/// H.264 Annex-B byte streams: NAL units split on start codes, grouped into access units.
public enum H264AnnexB {
    /// NAL unit types this code cares about (ITU-T H.264 table 7-1).
    public enum NALType {
        public static let slice: UInt8 = 1
        public static let idr: UInt8 = 5
        public static let sei: UInt8 = 6
        public static let sps: UInt8 = 7
        public static let pps: UInt8 = 8
        public static let aud: UInt8 = 9
    }

    /// One NAL unit (without its start code).
    public struct NALUnit: Sendable, Equatable {
        public var bytes: ArraySlice<UInt8>
        public var type: UInt8 { bytes.first.map { $0 & 0x1f } ?? 0 }
        /// A coded slice (types 1-5).
        public var isVCL: Bool { (1...5).contains(type) }
        /// For a slice: first_mb_in_slice == 0, i.e. the slice starts a new picture. The value is
        /// ue(v) right after the one-byte header; 0 is coded as a single 1 bit.
        public var isFirstSliceOfPicture: Bool {
            guard isVCL, bytes.count > 1 else { return false }
            return bytes[bytes.startIndex + 1] & 0x80 != 0
        }
    }

    /// Splits a byte stream on 3- and 4-byte start codes. Bytes before the first start code are
    /// ignored; trailing zero bytes of a NAL unit (the next 4-byte start code's first byte) are
    /// trimmed.
    public static func nalUnits(_ data: [UInt8]) -> [NALUnit] {
        var units: [NALUnit] = []
        var i = 0
        var start: Int?
        let n = data.count
        while i + 2 < n {
            if data[i] == 0, data[i + 1] == 0, data[i + 2] == 1 {
                if let s = start { units.append(NALUnit(bytes: trimmed(data, s, i))) }
                i += 3
                start = i
                continue
            }
            // Skip quickly: a start code needs data[i+2] <= 1.
            i += data[i + 2] > 1 ? 3 : 1
        }
        if let s = start, s < n { units.append(NALUnit(bytes: trimmed(data, s, n))) }
        return units.filter { !$0.bytes.isEmpty }
    }

    private static func trimmed(_ data: [UInt8], _ start: Int, _ end: Int) -> ArraySlice<UInt8> {
        var e = end
        while e > start, data[e - 1] == 0 { e -= 1 }
        return data[start..<e]
    }

    /// Groups NAL units into access units (H.264 7.4.1.2.3): a new one starts at an access unit
    /// delimiter, at SPS/PPS/SEI (or types 14-18) following a picture's slices, and at a slice with
    /// first_mb_in_slice 0 following a picture's slices.
    public static func accessUnits(_ units: [NALUnit]) -> [[NALUnit]] {
        var out: [[NALUnit]] = []
        var current: [NALUnit] = []
        var currentHasPicture = false
        for unit in units {
            let t = unit.type
            let startsNew: Bool
            switch t {
            case NALType.aud:
                startsNew = !current.isEmpty
            case NALType.sei, NALType.sps, NALType.pps, 14...18:
                startsNew = currentHasPicture
            case 1...5:
                startsNew = currentHasPicture && unit.isFirstSliceOfPicture
            default:
                startsNew = false
            }
            if startsNew {
                out.append(current)
                current = []
                currentHasPicture = false
            }
            current.append(unit)
            if unit.isVCL { currentHasPicture = true }
        }
        if !current.isEmpty { out.append(current) }
        return out
    }

    /// Serialises NAL units with 4-byte start codes.
    public static func annexB(_ units: [NALUnit]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(units.reduce(0) { $0 + $1.bytes.count + 4 })
        for unit in units {
            out.append(contentsOf: [0, 0, 0, 1])
            out.append(contentsOf: unit.bytes)
        }
        return out
    }

    /// Does this Annex-B data hold an IDR slice?
    public static func containsIDR(_ data: [UInt8]) -> Bool {
        nalUnits(data).contains { $0.type == NALType.idr }
    }
}

/// Reads bits MSB first from an RBSP (emulation prevention bytes removed).
struct BitReader {
    private let bytes: [UInt8]
    private var position = 0

    /// Removes emulation prevention (00 00 03 -> 00 00) from a NAL unit's payload.
    init(nalPayload: ArraySlice<UInt8>) {
        var rbsp: [UInt8] = []
        rbsp.reserveCapacity(nalPayload.count)
        var zeros = 0
        for byte in nalPayload {
            if zeros >= 2, byte == 3 {
                zeros = 0
                continue
            }
            rbsp.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        bytes = rbsp
    }

    enum Failure: Error { case endOfData, badGolomb }

    mutating func bit() throws(Failure) -> UInt32 {
        guard position < bytes.count * 8 else { throw .endOfData }
        let b = (bytes[position >> 3] >> (7 - UInt8(position & 7))) & 1
        position += 1
        return UInt32(b)
    }

    mutating func bits(_ count: Int) throws(Failure) -> UInt32 {
        var v: UInt32 = 0
        for _ in 0..<count { v = (v << 1) | (try bit()) }
        return v
    }

    mutating func flag() throws(Failure) -> Bool { try bit() == 1 }

    /// ue(v)
    mutating func golomb() throws(Failure) -> UInt32 {
        var zeros = 0
        while try bit() == 0 {
            zeros += 1
            if zeros > 31 { throw .badGolomb }
        }
        return zeros == 0 ? 0 : ((1 << UInt32(zeros)) - 1 + (try bits(zeros)))
    }

    /// se(v)
    mutating func signedGolomb() throws(Failure) -> Int32 {
        let k = try golomb()
        return k & 1 == 1 ? Int32((k + 1) / 2) : -Int32(k / 2)
    }
}

/// What a sequence parameter set says about the picture: size (after cropping) and, when the
/// encoder wrote VUI timing, the frame rate.
public struct H264SequenceInfo: Sendable, Equatable {
    public var profile: UInt8
    public var level: UInt8
    public var width: Int
    public var height: Int
    public var fps: Double?

    /// Parses an SPS NAL unit (with its header byte). nil when it is not one or is malformed.
    public init?(sps unit: H264AnnexB.NALUnit) {
        guard unit.type == H264AnnexB.NALType.sps, unit.bytes.count > 4 else { return nil }
        var r = BitReader(nalPayload: unit.bytes.dropFirst())
        var w = 0, h = 0, profileValue: UInt8 = 0, levelValue: UInt8 = 0
        var rate: Double?
        do throws(BitReader.Failure) {
            let profileIdc = try r.bits(8)
            _ = try r.bits(8)  // constraint flags
            let levelIdc = try r.bits(8)
            _ = try r.golomb()  // seq_parameter_set_id
            var chromaFormat: UInt32 = 1
            var separateColourPlane = false
            if [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135].contains(profileIdc) {
                chromaFormat = try r.golomb()
                if chromaFormat == 3 { separateColourPlane = try r.flag() }
                _ = try r.golomb()  // bit_depth_luma_minus8
                _ = try r.golomb()  // bit_depth_chroma_minus8
                _ = try r.flag()  // qpprime_y_zero_transform_bypass_flag
                if try r.flag() {  // seq_scaling_matrix_present_flag
                    for i in 0..<(chromaFormat != 3 ? 8 : 12) where try r.flag() {
                        var last: Int32 = 8, next: Int32 = 8
                        for _ in 0..<(i < 6 ? 16 : 64) where next != 0 {
                            next = (last + (try r.signedGolomb()) + 256) % 256
                            last = next == 0 ? last : next
                        }
                    }
                }
            }
            _ = try r.golomb()  // log2_max_frame_num_minus4
            let pocType = try r.golomb()
            if pocType == 0 {
                _ = try r.golomb()
            } else if pocType == 1 {
                _ = try r.flag()
                _ = try r.signedGolomb()
                _ = try r.signedGolomb()
                let cycle = try r.golomb()
                guard cycle < 256 else { return nil }
                for _ in 0..<cycle { _ = try r.signedGolomb() }
            }
            _ = try r.golomb()  // max_num_ref_frames
            _ = try r.flag()  // gaps_in_frame_num_value_allowed_flag
            let widthMbs = Int(try r.golomb()) + 1
            let heightMapUnits = Int(try r.golomb()) + 1
            let frameMbsOnly = try r.flag()
            if !frameMbsOnly { _ = try r.flag() }
            _ = try r.flag()  // direct_8x8_inference_flag
            var crop = (left: 0, right: 0, top: 0, bottom: 0)
            if try r.flag() {
                crop = (Int(try r.golomb()), Int(try r.golomb()), Int(try r.golomb()), Int(try r.golomb()))
            }
            let arrayType = separateColourPlane ? 0 : chromaFormat
            let cropUnitX = arrayType == 0 ? 1 : (chromaFormat == 3 ? 1 : 2)
            let cropUnitY = (arrayType == 0 ? 1 : (chromaFormat == 1 ? 2 : 1)) * (frameMbsOnly ? 1 : 2)
            let frameHeightMbs = heightMapUnits * (frameMbsOnly ? 1 : 2)
            w = widthMbs * 16 - cropUnitX * (crop.left + crop.right)
            h = frameHeightMbs * 16 - cropUnitY * (crop.top + crop.bottom)
            profileValue = UInt8(truncatingIfNeeded: profileIdc)
            levelValue = UInt8(truncatingIfNeeded: levelIdc)
            if try r.flag() {  // vui_parameters_present_flag
                if try r.flag() {  // aspect_ratio_info_present_flag
                    if try r.bits(8) == 255 { _ = try r.bits(32) }
                }
                if try r.flag() { _ = try r.flag() }  // overscan
                if try r.flag() {  // video_signal_type_present_flag
                    _ = try r.bits(4)
                    if try r.flag() { _ = try r.bits(24) }
                }
                if try r.flag() {  // chroma_loc_info_present_flag
                    _ = try r.golomb()
                    _ = try r.golomb()
                }
                if try r.flag() {  // timing_info_present_flag
                    let unitsInTick = try r.bits(32)
                    let timeScale = try r.bits(32)
                    if unitsInTick > 0, timeScale > 0 {
                        rate = Double(timeScale) / (2 * Double(unitsInTick))
                    }
                }
            }
        } catch {
            // A truncated VUI still leaves the size known; a truncated size does not.
        }
        guard w > 0, h > 0 else { return nil }
        width = w
        height = h
        profile = profileValue
        level = levelValue
        fps = rate
    }
}

/// Keeps the latest SPS and PPS of a live H.264 stream (a camera's pass-through) and puts them in
/// front of any IDR access unit that arrives without them, so every key frame can start a decoder.
public struct H264ParameterSetCache: Sendable {
    private var sps: H264AnnexB.NALUnit?
    private var pps: H264AnnexB.NALUnit?

    public init() {}

    /// Returns the access unit, completed with SPS/PPS when it is an IDR lacking them, and
    /// whether it is an IDR.
    public mutating func process(_ accessUnit: [UInt8]) -> (bytes: [UInt8], isKeyFrame: Bool) {
        let units = H264AnnexB.nalUnits(accessUnit)
        var hasSPS = false, hasPPS = false, isIDR = false
        for unit in units {
            switch unit.type {
            case H264AnnexB.NALType.sps: sps = unit; hasSPS = true
            case H264AnnexB.NALType.pps: pps = unit; hasPPS = true
            case H264AnnexB.NALType.idr: isIDR = true
            default: break
            }
        }
        guard isIDR, !(hasSPS && hasPPS), let sps, let pps else { return (accessUnit, isIDR) }
        var completed: [H264AnnexB.NALUnit] = []
        if !hasSPS { completed.append(sps) }
        if !hasPPS { completed.append(pps) }
        return (H264AnnexB.annexB(completed + units), true)
    }
}
