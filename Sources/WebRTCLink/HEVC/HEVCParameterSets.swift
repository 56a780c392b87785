// H.265 access units as the encoder gives them (Annex B byte stream) and what an MP4 file needs of
// them (PROTOCOL.md 7): NAL units, the VPS/SPS/PPS, the picture size, and the `hvcC` decoder
// configuration record (ISO/IEC 14496-15 8.3.3). Sans-IO; every read is bounds-checked.

public enum HEVCError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A bitstream or box ended before a field it must hold.
    case truncated(String)
    /// A value the format does not allow (the text names it).
    case invalid(String)
    /// A key frame came without a VPS, SPS or PPS before any was known.
    case missingParameterSets(String)

    public var description: String {
        switch self {
        case .truncated(let what): "truncated: \(what)"
        case .invalid(let what): "invalid: \(what)"
        case .missingParameterSets(let what): "missing parameter sets: \(what)"
        }
    }
}

/// NAL unit types this code looks at (ITU-T H.265 table 7-1).
public enum HEVCNALType {
    public static let vps: UInt8 = 32
    public static let sps: UInt8 = 33
    public static let pps: UInt8 = 34
    public static let accessUnitDelimiter: UInt8 = 35

    /// The type of a NAL unit (its first header byte), nil for an empty one.
    public static func of(_ nal: some Collection<UInt8>) -> UInt8? {
        nal.first.map { ($0 >> 1) & 0x3F }
    }

    /// IRAP pictures (BLA, IDR, CRA: 16...23): a decoder can start there.
    public static func isKeyFrame(_ type: UInt8) -> Bool { (16...23).contains(type) }
}

public enum HEVCAnnexB {
    /// The NAL units of an Annex B byte stream (start codes 00 00 01 or 00 00 00 01), without
    /// their start codes. Bytes before the first start code are ignored.
    public static func nalUnits(_ stream: [UInt8]) -> [ArraySlice<UInt8>] {
        var starts: [(codeStart: Int, dataStart: Int)] = []
        var i = 0
        let n = stream.count
        while i + 2 < n {
            if stream[i] == 0, stream[i + 1] == 0, stream[i + 2] == 1 {
                let codeStart = i > 0 && stream[i - 1] == 0 ? i - 1 : i
                starts.append((codeStart, i + 3))
                i += 3
            } else {
                i += 1
            }
        }
        var out: [ArraySlice<UInt8>] = []
        for (index, start) in starts.enumerated() {
            var end = index + 1 < starts.count ? starts[index + 1].codeStart : n
            while end > start.dataStart, stream[end - 1] == 0 { end -= 1 }  // trailing zero bytes
            if end > start.dataStart { out.append(stream[start.dataStart..<end]) }
        }
        return out
    }

    /// The NAL unit without emulation prevention bytes (00 00 03 -> 00 00).
    public static func rbsp(_ nal: some Collection<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(nal.count)
        var zeros = 0
        for byte in nal {
            if zeros >= 2, byte == 3 {
                zeros = 0
                continue
            }
            zeros = byte == 0 ? zeros + 1 : 0
            out.append(byte)
        }
        return out
    }
}

/// Reads bits most significant first, with Exp-Golomb codes (H.265 9.2).
struct BitReader {
    private let bytes: [UInt8]
    private(set) var position = 0

    init(_ bytes: [UInt8], bytePosition: Int = 0) {
        self.bytes = bytes
        position = bytePosition * 8
    }

    mutating func bit() throws(HEVCError) -> UInt32 {
        let byte = position / 8
        guard byte < bytes.count else { throw .truncated("SPS ends at bit \(position)") }
        let value = (bytes[byte] >> (7 - UInt8(position % 8))) & 1
        position += 1
        return UInt32(value)
    }

    mutating func bits(_ count: Int) throws(HEVCError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<count { value = (value << 1) | (try bit()) }
        return value
    }

    mutating func skip(_ count: Int) throws(HEVCError) {
        guard position + count <= bytes.count * 8 else { throw .truncated("SPS ends at bit \(position)") }
        position += count
    }

    /// ue(v); values beyond 2^31 are refused.
    mutating func unsignedExpGolomb() throws(HEVCError) -> UInt32 {
        var zeros = 0
        while try bit() == 0 {
            zeros += 1
            guard zeros < 32 else { throw .invalid("Exp-Golomb code longer than 32 bits") }
        }
        let rest = try bits(zeros)
        return (UInt32(1) << UInt32(zeros)) - 1 + rest
    }
}

/// What the MP4 sample entry needs of a sequence parameter set.
public struct HEVCSequenceInfo: Sendable, Hashable {
    /// general_profile_tier_level: 12 bytes (profile space/tier/idc, compatibility flags,
    /// constraint flags, level).
    public var profileTierLevel: [UInt8]
    public var maxSubLayersMinus1: UInt8
    public var temporalIdNesting: Bool
    public var chromaFormat: UInt8
    public var bitDepthLumaMinus8: UInt8
    public var bitDepthChromaMinus8: UInt8
    /// The picture size after the conformance window (what is displayed).
    public var width: Int
    public var height: Int

    /// Parses an SPS NAL unit (header included, emulation prevention bytes allowed).
    public init(sps nal: some Collection<UInt8>) throws(HEVCError) {
        let rbsp = HEVCAnnexB.rbsp(nal)
        guard rbsp.count >= 15 else { throw .truncated("SPS of \(rbsp.count) bytes") }
        guard HEVCNALType.of(rbsp) == HEVCNALType.sps else { throw .invalid("NAL type \(HEVCNALType.of(rbsp) ?? 0) is not an SPS") }
        maxSubLayersMinus1 = (rbsp[2] >> 1) & 0x07
        temporalIdNesting = rbsp[2] & 1 == 1
        profileTierLevel = Array(rbsp[3..<15])
        var reader = BitReader(rbsp, bytePosition: 15)
        let subLayers = Int(maxSubLayersMinus1)
        var profilePresent: [Bool] = []
        var levelPresent: [Bool] = []
        for _ in 0..<subLayers {
            profilePresent.append(try reader.bit() == 1)
            levelPresent.append(try reader.bit() == 1)
        }
        if subLayers > 0 { try reader.skip(2 * (8 - subLayers)) }
        for i in 0..<subLayers {
            if profilePresent[i] { try reader.skip(88) }
            if levelPresent[i] { try reader.skip(8) }
        }
        _ = try reader.unsignedExpGolomb()  // sps_seq_parameter_set_id
        let chroma = try reader.unsignedExpGolomb()
        guard chroma <= 3 else { throw .invalid("chroma_format_idc \(chroma)") }
        chromaFormat = UInt8(chroma)
        if chroma == 3 { _ = try reader.bit() }  // separate_colour_plane_flag
        let codedWidth = try reader.unsignedExpGolomb()
        let codedHeight = try reader.unsignedExpGolomb()
        guard codedWidth > 0, codedHeight > 0, codedWidth <= 16384, codedHeight <= 16384 else {
            throw .invalid("picture size \(codedWidth)x\(codedHeight)")
        }
        var width = Int(codedWidth)
        var height = Int(codedHeight)
        if try reader.bit() == 1 {  // conformance_window_flag
            let left = Int(try reader.unsignedExpGolomb()), right = Int(try reader.unsignedExpGolomb())
            let top = Int(try reader.unsignedExpGolomb()), bottom = Int(try reader.unsignedExpGolomb())
            let subWidth = chroma == 1 || chroma == 2 ? 2 : 1
            let subHeight = chroma == 1 ? 2 : 1
            width -= subWidth * (left + right)
            height -= subHeight * (top + bottom)
            guard width > 0, height > 0 else { throw .invalid("conformance window larger than the picture") }
        }
        self.width = width
        self.height = height
        let lumaDepth = try reader.unsignedExpGolomb()
        let chromaDepth = try reader.unsignedExpGolomb()
        // The depths are read as minus-8 values of up to 2^32 - 2: the message adds 8 in Int, never in UInt32.
        guard lumaDepth <= 8, chromaDepth <= 8 else { throw .invalid("bit depth \(Int(lumaDepth) + 8)/\(Int(chromaDepth) + 8)") }
        bitDepthLumaMinus8 = UInt8(lumaDepth)
        bitDepthChromaMinus8 = UInt8(chromaDepth)
    }
}

/// The VPS, SPS and PPS of a stream, and the `hvcC` record made of them.
public struct HEVCParameterSets: Sendable, Hashable {
    public var vps: [UInt8]
    public var sps: [UInt8]
    public var pps: [UInt8]
    public let info: HEVCSequenceInfo

    public init(vps: [UInt8], sps: [UInt8], pps: [UInt8]) throws(HEVCError) {
        guard !vps.isEmpty, !sps.isEmpty, !pps.isEmpty else { throw .missingParameterSets("an empty VPS, SPS or PPS") }
        self.vps = vps
        self.sps = sps
        self.pps = pps
        info = try HEVCSequenceInfo(sps: sps)
    }

    /// HEVCDecoderConfigurationRecord (ISO/IEC 14496-15 8.3.3.1.2), NAL lengths of 4 bytes.
    public var decoderConfigurationRecord: [UInt8] {
        var out: [UInt8] = [1]
        out.append(contentsOf: info.profileTierLevel)  // profile space..level: 12 bytes
        out.append(contentsOf: [0xF0, 0x00])  // min_spatial_segmentation_idc 0
        out.append(0xFC)  // parallelismType 0 (unknown)
        out.append(0xFC | info.chromaFormat)
        out.append(0xF8 | info.bitDepthLumaMinus8)
        out.append(0xF8 | info.bitDepthChromaMinus8)
        out.append(contentsOf: [0, 0])  // avgFrameRate unknown
        // constantFrameRate 0, numTemporalLayers, temporalIdNested, lengthSizeMinusOne 3
        out.append(((info.maxSubLayersMinus1 + 1) & 0x07) << 3 | (info.temporalIdNesting ? 0x04 : 0) | 0x03)
        out.append(3)
        for (type, nal) in [(HEVCNALType.vps, vps), (HEVCNALType.sps, sps), (HEVCNALType.pps, pps)] {
            out.append(0x80 | type)  // array_completeness 1
            out.append(contentsOf: [0, 1])
            out.append(UInt8(truncatingIfNeeded: nal.count >> 8))
            out.append(UInt8(truncatingIfNeeded: nal.count))
            out.append(contentsOf: nal)
        }
        return out
    }

    /// Reads the parameter sets back out of an `hvcC` record (the app's side).
    public init(decoderConfigurationRecord record: [UInt8]) throws(HEVCError) {
        guard record.count >= 23 else { throw .truncated("hvcC of \(record.count) bytes") }
        guard record[0] == 1 else { throw .invalid("hvcC configurationVersion \(record[0])") }
        guard record[21] & 0x03 == 3 else { throw .invalid("hvcC NAL length size \(Int(record[21] & 0x03) + 1), only 4 is read") }
        var found: [UInt8: [UInt8]] = [:]
        var at = 23
        for _ in 0..<Int(record[22]) {
            guard at + 3 <= record.count else { throw .truncated("hvcC array header") }
            let type = record[at] & 0x3F
            let count = Int(record[at + 1]) << 8 | Int(record[at + 2])
            at += 3
            for _ in 0..<count {
                guard at + 2 <= record.count else { throw .truncated("hvcC NAL length") }
                let length = Int(record[at]) << 8 | Int(record[at + 1])
                at += 2
                guard at + length <= record.count else { throw .truncated("hvcC NAL of \(length) bytes") }
                if found[type] == nil { found[type] = Array(record[at..<(at + length)]) }
                at += length
            }
        }
        guard let vps = found[HEVCNALType.vps], let sps = found[HEVCNALType.sps], let pps = found[HEVCNALType.pps] else {
            throw .missingParameterSets("hvcC lacks a VPS, SPS or PPS")
        }
        try self.init(vps: vps, sps: sps, pps: pps)
    }
}

/// One access unit ready for an MP4 sample: its NAL units with 4-byte lengths, without the
/// parameter sets and delimiters (they live in the sample entry), and the parameter sets it
/// carried, if any.
public struct HEVCSample: Sendable, Hashable {
    public var data: [UInt8]
    public var isKeyFrame: Bool
    public var vps: [UInt8]?
    public var sps: [UInt8]?
    public var pps: [UInt8]?

    /// From an Annex B access unit. Throws for an access unit with no picture data.
    public init(annexB accessUnit: [UInt8]) throws(HEVCError) {
        data = []
        data.reserveCapacity(accessUnit.count + 16)
        isKeyFrame = false
        for nal in HEVCAnnexB.nalUnits(accessUnit) {
            guard let type = HEVCNALType.of(nal) else { continue }
            switch type {
            case HEVCNALType.vps: vps = Array(nal)
            case HEVCNALType.sps: sps = Array(nal)
            case HEVCNALType.pps: pps = Array(nal)
            case HEVCNALType.accessUnitDelimiter: continue
            default:
                if HEVCNALType.isKeyFrame(type) { isKeyFrame = true }
                let length = UInt32(nal.count)
                data.append(contentsOf: [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)])
                data.append(contentsOf: nal)
            }
        }
        guard !data.isEmpty else { throw .invalid("an access unit without picture data") }
    }

    /// Back to Annex B (the app's side), with the parameter sets first when given (key frames).
    public static func annexB(sample: some Collection<UInt8>, prefix parameterSets: HEVCParameterSets?) throws(HEVCError) -> [UInt8] {
        let bytes = Array(sample)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 256)
        let startCode: [UInt8] = [0, 0, 0, 1]
        if let sets = parameterSets {
            for nal in [sets.vps, sets.sps, sets.pps] {
                out.append(contentsOf: startCode)
                out.append(contentsOf: nal)
            }
        }
        var at = 0
        while at < bytes.count {
            guard at + 4 <= bytes.count else { throw .truncated("NAL length at sample byte \(at)") }
            let length = Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            at += 4
            guard length > 0, length <= bytes.count - at else { throw .truncated("NAL of \(length) bytes at sample byte \(at)") }
            out.append(contentsOf: startCode)
            out.append(contentsOf: bytes[at..<(at + length)])
            at += length
        }
        return out
    }
}
