// Fragmented MP4 for the `fmp4Stream` data channel (PROTOCOL.md 7): an initialisation segment
// (`ftyp`+`moov`, track 1 `hvc1`) and, per access unit, one media segment (`moof`+`mdat` with one
// sample). Written here rather than by GStreamer's mp4mux: its `fragment-duration` cuts by time,
// not by access unit, so one fragment per access unit is not guaranteed; these boxes are.

/// Writes ISO BMFF boxes (ISO/IEC 14496-12) into a byte array.
struct BoxWriter {
    private(set) var bytes: [UInt8] = []

    mutating func u8(_ v: UInt8) { bytes.append(v) }
    mutating func u16(_ v: UInt16) { bytes.append(contentsOf: [UInt8(v >> 8), UInt8(v & 0xFF)]) }
    mutating func u32(_ v: UInt32) {
        bytes.append(contentsOf: [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)])
    }
    mutating func u64(_ v: UInt64) {
        u32(UInt32(truncatingIfNeeded: v >> 32))
        u32(UInt32(truncatingIfNeeded: v))
    }
    mutating func zeros(_ n: Int) { bytes.append(contentsOf: repeatElement(0, count: n)) }
    mutating func fourCC(_ s: String) { bytes.append(contentsOf: Array(s.utf8.prefix(4))) }
    mutating func raw(_ b: some Sequence<UInt8>) { bytes.append(contentsOf: b) }

    /// A box: size, type, then what `body` writes.
    mutating func box(_ type: String, _ body: (inout BoxWriter) -> Void) {
        let start = bytes.count
        u32(0)
        fourCC(type)
        body(&self)
        patchU32(at: start, UInt32(truncatingIfNeeded: bytes.count - start))
    }

    /// A full box: version and flags first.
    mutating func fullBox(_ type: String, version: UInt8 = 0, flags: UInt32 = 0, _ body: (inout BoxWriter) -> Void) {
        box(type) { w in
            w.u32(UInt32(version) << 24 | (flags & 0x00FF_FFFF))
            body(&w)
        }
    }

    /// Overwrites 4 bytes written earlier (a field known only later).
    mutating func patchU32(at index: Int, _ v: UInt32) {
        guard index >= 0, index + 4 <= bytes.count else { return }
        bytes[index] = UInt8(v >> 24)
        bytes[index + 1] = UInt8(v >> 16 & 0xFF)
        bytes[index + 2] = UInt8(v >> 8 & 0xFF)
        bytes[index + 3] = UInt8(v & 0xFF)
    }

    mutating func unityMatrix() {
        for v: UInt32 in [0x0001_0000, 0, 0, 0, 0x0001_0000, 0, 0, 0, 0x4000_0000] { u32(v) }
    }
}

public enum FMP4Writer {
    /// Media time units per second (the usual 90 kHz video clock).
    public static let timescale: UInt32 = 90_000
    /// The video track's id.
    public static let trackID: UInt32 = 1

    /// `ftyp`+`moov` for one H.265 video track (`hvc1`: parameter sets in the sample entry only).
    public static func initializationSegment(_ sets: HEVCParameterSets) -> [UInt8] {
        let width = UInt32(clamping: sets.info.width)
        let height = UInt32(clamping: sets.info.height)
        var w = BoxWriter()
        w.box("ftyp") { w in
            w.fourCC("iso5")
            w.u32(512)
            for brand in ["iso5", "iso6", "mp41", "hvc1"] { w.fourCC(brand) }
        }
        w.box("moov") { w in
            w.fullBox("mvhd") { w in
                w.u32(0); w.u32(0)  // creation, modification
                w.u32(1000)  // timescale
                w.u32(0)  // duration (fragmented: in the fragments)
                w.u32(0x0001_0000); w.u16(0x0100)  // rate, volume
                w.zeros(10)
                w.unityMatrix()
                w.zeros(24)  // pre_defined
                w.u32(trackID + 1)  // next_track_ID
            }
            w.box("trak") { w in
                w.fullBox("tkhd", flags: 0x3) { w in  // enabled, in movie
                    w.u32(0); w.u32(0)
                    w.u32(trackID)
                    w.u32(0)
                    w.u32(0)  // duration
                    w.zeros(8)
                    w.u16(0); w.u16(0); w.u16(0); w.u16(0)  // layer, alternate group, volume, reserved
                    w.unityMatrix()
                    w.u32(width << 16); w.u32(height << 16)
                }
                w.box("mdia") { w in
                    w.fullBox("mdhd") { w in
                        w.u32(0); w.u32(0)
                        w.u32(timescale)
                        w.u32(0)
                        w.u16(0x55C4)  // language "und"
                        w.u16(0)
                    }
                    w.fullBox("hdlr") { w in
                        w.u32(0)
                        w.fourCC("vide")
                        w.zeros(12)
                        w.raw(Array("VideoHandler".utf8) + [0])
                    }
                    w.box("minf") { w in
                        w.fullBox("vmhd", flags: 1) { w in w.zeros(8) }
                        w.box("dinf") { w in
                            w.fullBox("dref") { w in
                                w.u32(1)
                                w.fullBox("url ", flags: 1) { _ in }
                            }
                        }
                        w.box("stbl") { w in
                            w.fullBox("stsd") { w in
                                w.u32(1)
                                w.box("hvc1") { w in
                                    w.zeros(6); w.u16(1)  // reserved, data_reference_index
                                    w.zeros(16)  // pre_defined, reserved
                                    w.u16(UInt16(clamping: width)); w.u16(UInt16(clamping: height))
                                    w.u32(0x0048_0000); w.u32(0x0048_0000)  // 72 dpi
                                    w.u32(0)
                                    w.u16(1)  // frame_count
                                    w.zeros(32)  // compressorname
                                    w.u16(0x0018); w.u16(0xFFFF)  // depth, pre_defined -1
                                    w.box("hvcC") { w in w.raw(sets.decoderConfigurationRecord) }
                                }
                            }
                            w.fullBox("stts") { w in w.u32(0) }
                            w.fullBox("stsc") { w in w.u32(0) }
                            w.fullBox("stsz") { w in w.u32(0); w.u32(0) }
                            w.fullBox("stco") { w in w.u32(0) }
                        }
                    }
                }
            }
            w.box("mvex") { w in
                w.fullBox("trex") { w in
                    w.u32(trackID)
                    w.u32(1)  // default_sample_description_index
                    w.u32(0); w.u32(0); w.u32(0)
                }
            }
        }
        return w.bytes
    }

    /// Sample flags (14496-12 8.8.3.1): a sync sample depends on nothing; others depend on
    /// earlier samples and are not sync samples.
    static func sampleFlags(keyFrame: Bool) -> UInt32 { keyFrame ? 0x0200_0000 : 0x0101_0000 }

    /// `moof`+`mdat` holding one sample.
    /// - Parameters:
    ///   - sequenceNumber: the fragment's number (mfhd), from 1.
    ///   - decodeTime: the sample's time in `timescale` units from the stream's start.
    ///   - duration: its duration in `timescale` units.
    public static func mediaSegment(
        sample: [UInt8], isKeyFrame: Bool, sequenceNumber: UInt32, decodeTime: UInt64, duration: UInt32
    ) -> [UInt8] {
        var w = BoxWriter()
        var dataOffsetAt = 0
        w.box("moof") { w in
            w.fullBox("mfhd") { w in w.u32(sequenceNumber) }
            w.box("traf") { w in
                w.fullBox("tfhd", flags: 0x02_0000) { w in w.u32(trackID) }  // default-base-is-moof
                w.fullBox("tfdt", version: 1) { w in w.u64(decodeTime) }
                // data-offset, sample-duration, sample-size, sample-flags present
                w.fullBox("trun", flags: 0x000701) { w in
                    w.u32(1)
                    dataOffsetAt = w.bytes.count
                    w.u32(0)
                    w.u32(duration)
                    w.u32(UInt32(clamping: sample.count))
                    w.u32(sampleFlags(keyFrame: isKeyFrame))
                }
            }
        }
        let offset = UInt32(clamping: w.bytes.count + 8)  // the sample starts after mdat's header
        w.patchU32(at: dataOffsetAt, offset)
        w.box("mdat") { w in w.raw(sample) }
        return w.bytes
    }
}
