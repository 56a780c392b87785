import Testing
@testable import WebRTCLink

/// PROTOCOL.md 7: the SPS reader behind the fmp4Stream sample entry, fed values at the edges of
/// Exp-Golomb coding. An SPS from outside yields an error that names the field, never a trap.
@Suite("H.265 SPS reader at the edges")
struct HEVCSequenceInfoTests {
    /// Writes fields MSB first, as an SPS carries them.
    struct BitWriter {
        var bytes: [UInt8] = []
        var count = 0
        mutating func bit(_ value: Bool) {
            if count % 8 == 0 { bytes.append(0) }
            if value { bytes[bytes.count - 1] |= 0x80 >> UInt8(count % 8) }
            count += 1
        }
        /// ue(v) with `zeros` leading zeros and the given suffix bits (all ones reaches the code's maximum).
        mutating func unsignedExpGolomb(zeros: Int, suffixOnes: Bool) {
            for _ in 0..<zeros { bit(false) }
            bit(true)
            for _ in 0..<zeros { bit(suffixOnes) }
        }
        mutating func unsignedExpGolomb(_ value: UInt32) {
            let coded = UInt64(value) + 1
            let length = 64 - coded.leadingZeroBitCount
            for _ in 0..<(length - 1) { bit(false) }
            for index in stride(from: length - 1, through: 0, by: -1) { bit(coded >> UInt64(index) & 1 == 1) }
        }
    }

    /// NAL header (type 33), one layer with temporal nesting, 12 bytes of profile/tier/level.
    static func sps(_ body: (inout BitWriter) -> Void) -> [UInt8] {
        var writer = BitWriter()
        writer.unsignedExpGolomb(0)  // sps_seq_parameter_set_id
        writer.unsignedExpGolomb(1)  // chroma_format_idc 4:2:0
        writer.unsignedExpGolomb(320)
        writer.unsignedExpGolomb(240)
        writer.bit(false)  // conformance_window_flag
        body(&writer)
        for _ in 0..<8 { writer.bit(true) }  // trailing bits, so no field ends the buffer
        return [0x42, 0x01, 0x01] + [UInt8](repeating: 0x11, count: 12) + writer.bytes
    }

    @Test func aPlainSPSReadsBack() throws {
        let info = try HEVCSequenceInfo(sps: Self.sps { writer in
            writer.unsignedExpGolomb(0)
            writer.unsignedExpGolomb(0)
        })
        #expect(info.width == 320 && info.height == 240)
        #expect(info.chromaFormat == 1 && info.bitDepthLumaMinus8 == 0 && info.bitDepthChromaMinus8 == 0)
    }

    /// The fuzzer's find (CI, stop 28): a bit depth of 2^32 - 2 trapped while the error message added 8.
    @Test func theLargestBitDepthIsAnErrorNamingIt() {
        let sps = Self.sps { writer in
            writer.unsignedExpGolomb(zeros: 31, suffixOnes: true)  // 2^32 - 2
            writer.unsignedExpGolomb(zeros: 31, suffixOnes: true)
        }
        #expect {
            try HEVCSequenceInfo(sps: sps)
        } throws: { error in
            guard let error = error as? HEVCError else { return false }
            return "\(error)".contains("bit depth 4294967302/4294967302")
        }
    }

    @Test func longerCodesAndHugeSizesAreRefused() {
        let tooLong = Self.sps { writer in writer.unsignedExpGolomb(zeros: 32, suffixOnes: true) }
        #expect(throws: HEVCError.self) { try HEVCSequenceInfo(sps: tooLong) }
        var writer = BitWriter()
        writer.unsignedExpGolomb(0)
        writer.unsignedExpGolomb(1)
        writer.unsignedExpGolomb(zeros: 31, suffixOnes: true)  // width 2^32 - 2
        writer.unsignedExpGolomb(240)
        for _ in 0..<8 { writer.bit(true) }
        let huge = [0x42, 0x01, 0x01] + [UInt8](repeating: 0x11, count: 12) + writer.bytes
        #expect(throws: HEVCError.self) { try HEVCSequenceInfo(sps: huge) }
    }
}
