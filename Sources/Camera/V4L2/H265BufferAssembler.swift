/// An H.265 V4L2 camera's buffers made ready to pass through to the `fmp4Stream` data channel
/// (PROTOCOL.md 7) without encoding, the way `H265Clip` prepares a file.
///
/// Each dequeued buffer is split into NAL units and access units (`H265Clip.accessUnits`: a new one
/// at an AUD, at VPS/SPS/PPS/prefix SEI after a picture, at a slice with
/// first_slice_segment_in_pic_flag set). Parameter sets are remembered wherever they come (with the
/// picture, or in a buffer of their own as some cameras send them once at STREAMON) and put in front
/// of every key frame that lacks them. Key frames are found from the NAL unit types (IRAP, 16-23),
/// whether or not the driver sets V4L2_BUF_FLAG_KEYFRAME. The stream starts at the first key frame
/// whose parameter sets are known; AUDs are dropped.
///
/// A buffer is input from outside: one that holds no NAL unit, or a NAL unit with a bad header
/// (shorter than 2 bytes, forbidden bit set, nuh_temporal_id_plus1 zero), is refused whole with a
/// typed error and changes nothing. Nothing here traps on any bytes.
public struct H265BufferAssembler: Sendable {
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// No start code, or only empty NAL units.
        case noNALUnits(bytes: Int)
        /// NAL unit `index` (from 0) of the buffer has a bad 2-byte header.
        case badNALHeader(index: Int)

        public var description: String {
            switch self {
            case .noNALUnits(let bytes): "an H.265 buffer of \(bytes) bytes holds no NAL units"
            case .badNALHeader(let index): "an H.265 buffer's NAL unit \(index) has a bad header"
            }
        }
    }

    /// IRAP pictures (BLA, IDR, CRA, and the reserved 22-23): a decoder can start there.
    public static let keyFrameTypes: ClosedRange<UInt8> = 16...23

    private var parameterSets = H265ParameterSetCache()
    private var started = false
    /// Pictures dropped because no decodable key frame had come yet.
    public private(set) var skippedBeforeKeyFrame = 0

    public init() {}

    /// Whether a 2-byte H.265 NAL unit header is well formed: forbidden_zero_bit 0 and
    /// nuh_temporal_id_plus1 not 0 (H.265 7.4.2.2).
    static func hasValidHeader(_ unit: H264AnnexB.NALUnit) -> Bool {
        guard unit.bytes.count >= 2 else { return false }
        let b0 = unit.bytes[unit.bytes.startIndex], b1 = unit.bytes[unit.bytes.startIndex + 1]
        return b0 & 0x80 == 0 && b1 & 0x07 != 0
    }

    /// The access units of one buffer, in order (often one; none for a buffer of parameter sets
    /// only, or for pictures before the first decodable key frame).
    public mutating func accessUnits(in buffer: [UInt8]) throws(Failure) -> [H264Clip.AccessUnit] {
        let units = H264AnnexB.nalUnits(buffer)
        guard !units.isEmpty else { throw .noNALUnits(bytes: buffer.count) }
        if let bad = units.firstIndex(where: { !Self.hasValidHeader($0) }) { throw .badNALHeader(index: bad) }
        var out: [H264Clip.AccessUnit] = []
        for au in H265Clip.accessUnits(units) {
            parameterSets.remember(au)
            let types = au.compactMap(H265Clip.type)
            guard types.contains(where: { $0 < 32 }) else { continue }  // no picture
            let isKey = types.contains { Self.keyFrameTypes.contains($0) }
            var picture = au.filter { H265Clip.type($0) != H265Clip.NALType.aud }
            if isKey, let completed = parameterSets.completingKeyFrame(picture) {
                picture = completed
                started = true
            } else if !started || isKey {
                // Before the first decodable key frame, or a key frame whose parameter sets never
                // came: nothing can decode it.
                skippedBeforeKeyFrame += 1
                continue
            }
            out.append(H264Clip.AccessUnit(bytes: H264AnnexB.annexB(picture), isKeyFrame: isKey))
        }
        return out
    }
}
