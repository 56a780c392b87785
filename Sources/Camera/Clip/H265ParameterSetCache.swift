/// Keeps the latest VPS, SPS and PPS of an H.265 stream and completes key frames with them, so any
/// key frame can start a decoder and the fMP4 writer finds its `hvcC` in band (PROTOCOL.md 7).
/// Shared by the H.265 clip (`H265Clip`) and the H.265 V4L2 camera (`H265BufferAssembler`).
public struct H265ParameterSetCache: Sendable {
    private var vps: H264AnnexB.NALUnit?
    private var sps: H264AnnexB.NALUnit?
    private var pps: H264AnnexB.NALUnit?

    public init() {}

    /// Whether a VPS, an SPS and a PPS have all been seen.
    public var isComplete: Bool { vps != nil && sps != nil && pps != nil }

    /// Remembers the parameter sets among `units` (the last of each type wins).
    public mutating func remember(_ units: [H264AnnexB.NALUnit]) {
        for unit in units {
            switch H265Clip.type(unit) {
            case H265Clip.NALType.vps: vps = unit
            case H265Clip.NALType.sps: sps = unit
            case H265Clip.NALType.pps: pps = unit
            default: break
            }
        }
    }

    /// A key frame's NAL units with VPS, SPS and PPS first, in that order: the remembered ones
    /// stand in for any type the access unit lacks. nil when one of the three was never seen.
    public func completingKeyFrame(_ units: [H264AnnexB.NALUnit]) -> [H264AnnexB.NALUnit]? {
        guard let vps, let sps, let pps else { return nil }
        let present = Set(units.compactMap(H265Clip.type))
        let missing = [vps, sps, pps].filter { !present.contains(H265Clip.type($0) ?? 0) }
        let all = missing + units
        let range = H265Clip.NALType.vps...H265Clip.NALType.pps
        func isSet(_ unit: H264AnnexB.NALUnit) -> Bool { range.contains(H265Clip.type(unit) ?? 0) }
        // Stable: parameter sets of one type keep their order.
        let sets = all.enumerated().filter { isSet($0.element) }
            .sorted { (H265Clip.type($0.element) ?? 0, $0.offset) < (H265Clip.type($1.element) ?? 0, $1.offset) }
            .map(\.element)
        return sets + all.filter { !isSet($0) }
    }
}
