// The app's side of the `fmp4Stream` data channel (PROTOCOL.md 7): reads the initialisation
// segment (the `hvcC` of track 1) and each media segment (`moof`+`mdat`, one sample) back into
// H.265 Annex B access units a decoder takes. Every read is bounds-checked: a bad segment is an
// error naming the box, never a crash.

/// One box: its type and its body (the bytes after the header).
struct Box {
    var type: String
    var body: ArraySlice<UInt8>

    /// The boxes one after the other in `bytes` (32-bit sizes; 64-bit `largesize` too).
    static func children(of bytes: ArraySlice<UInt8>) throws(HEVCError) -> [Box] {
        var out: [Box] = []
        var at = bytes.startIndex
        while at < bytes.endIndex {
            guard bytes.endIndex - at >= 8 else { throw .truncated("box header at byte \(at)") }
            var size = Int(BoxReader.u32(bytes, at))
            let type = String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self)
            var header = 8
            if size == 1 {
                guard bytes.endIndex - at >= 16 else { throw .truncated("'\(type)' largesize") }
                let large = BoxReader.u64(bytes, at + 8)
                guard large <= UInt64(Int.max) else { throw .invalid("'\(type)' size \(large)") }
                size = Int(large)
                header = 16
            } else if size == 0 {
                size = bytes.endIndex - at
            }
            guard size >= header, size <= bytes.endIndex - at else {
                throw .truncated("'\(type)' of \(size) bytes with \(bytes.endIndex - at) left")
            }
            out.append(Box(type: type, body: bytes[(at + header)..<(at + size)]))
            at += size
        }
        return out
    }

    func child(_ type: String) throws(HEVCError) -> Box {
        guard let found = try Box.children(of: body).first(where: { $0.type == type }) else {
            throw .invalid("'\(self.type)' has no '\(type)'")
        }
        return found
    }
}

enum BoxReader {
    static func u32(_ b: ArraySlice<UInt8>, _ at: Int) -> UInt32 {
        UInt32(b[at]) << 24 | UInt32(b[at + 1]) << 16 | UInt32(b[at + 2]) << 8 | UInt32(b[at + 3])
    }

    static func u64(_ b: ArraySlice<UInt8>, _ at: Int) -> UInt64 { UInt64(u32(b, at)) << 32 | UInt64(u32(b, at + 4)) }

    /// A u32 at `offset` into a box body, or an error naming the field.
    static func field(_ body: ArraySlice<UInt8>, _ offset: Int, _ name: String) throws(HEVCError) -> UInt32 {
        guard offset >= 0, body.count >= offset + 4 else { throw .truncated(name) }
        return u32(body, body.startIndex + offset)
    }
}

/// The initialisation segment, read.
public struct FMP4InitializationSegment: Sendable, Hashable {
    public var parameterSets: HEVCParameterSets
    /// `hvc1` or `hev1`.
    public var sampleEntry: String
    public var width: Int
    public var height: Int
    public var timescale: UInt32

    public init(parsing bytes: [UInt8]) throws(HEVCError) {
        let top = try Box.children(of: bytes[...])
        guard top.first?.type == "ftyp" else { throw .invalid("an initialisation segment must start with 'ftyp'") }
        guard let moov = top.first(where: { $0.type == "moov" }) else { throw .invalid("no 'moov' in the initialisation segment") }
        let trak = try moov.child("trak")
        let mdia = try trak.child("mdia")
        let mdhd = try mdia.child("mdhd")
        let version = mdhd.body.first ?? 0
        timescale = try BoxReader.field(mdhd.body, version == 1 ? 20 : 12, "mdhd timescale")
        guard timescale > 0 else { throw .invalid("mdhd timescale 0") }
        let stsd = try mdia.child("minf").child("stbl").child("stsd")
        guard stsd.body.count > 8 else { throw .truncated("stsd") }
        let entries = try Box.children(of: stsd.body.dropFirst(8))
        guard let entry = entries.first(where: { $0.type == "hvc1" || $0.type == "hev1" }) else {
            throw .invalid("the sample entry is \(entries.first?.type ?? "absent"), not hvc1/hev1")
        }
        sampleEntry = entry.type
        // VisualSampleEntry: 78 bytes before its child boxes; width/height at 24/26.
        guard entry.body.count > 78 else { throw .truncated("\(entry.type) sample entry") }
        let base = entry.body.startIndex
        width = Int(entry.body[base + 24]) << 8 | Int(entry.body[base + 25])
        height = Int(entry.body[base + 26]) << 8 | Int(entry.body[base + 27])
        guard let hvcC = try Box.children(of: entry.body.dropFirst(78)).first(where: { $0.type == "hvcC" }) else {
            throw .invalid("\(entry.type) has no 'hvcC'")
        }
        parameterSets = try HEVCParameterSets(decoderConfigurationRecord: Array(hvcC.body))
    }
}

/// A media segment, read: its one sample.
public struct FMP4MediaSegment: Sendable, Hashable {
    public var sequenceNumber: UInt32
    public var decodeTime: UInt64
    public var duration: UInt32
    public var isKeyFrame: Bool
    /// The sample: NAL units with 4-byte lengths.
    public var sample: [UInt8]

    public init(parsing bytes: [UInt8]) throws(HEVCError) {
        let top = try Box.children(of: bytes[...])
        guard top.count == 2, top[0].type == "moof", top[1].type == "mdat" else {
            throw .invalid("a media segment must be 'moof' then 'mdat', got \(top.map(\.type))")
        }
        let moof = top[0]
        sequenceNumber = try BoxReader.field(moof.child("mfhd").body, 4, "mfhd sequence_number")
        let traf = try moof.child("traf")
        let tfdt = try traf.child("tfdt")
        if tfdt.body.first == 1 {
            guard tfdt.body.count >= 12 else { throw .truncated("tfdt") }
            decodeTime = BoxReader.u64(tfdt.body, tfdt.body.startIndex + 4)
        } else {
            decodeTime = UInt64(try BoxReader.field(tfdt.body, 4, "tfdt baseMediaDecodeTime"))
        }
        let trun = try traf.child("trun")
        let flags = try BoxReader.field(trun.body, 0, "trun flags") & 0x00FF_FFFF
        let count = try BoxReader.field(trun.body, 4, "trun sample_count")
        guard count == 1 else { throw .invalid("trun holds \(count) samples; a segment holds one access unit") }
        var at = 8
        if flags & 0x1 != 0 { at += 4 }  // data_offset
        var sampleFlags: UInt32 = 0x0101_0000
        if flags & 0x4 != 0 {
            sampleFlags = try BoxReader.field(trun.body, at, "trun first_sample_flags")
            at += 4
        }
        duration = 0
        if flags & 0x100 != 0 {
            duration = try BoxReader.field(trun.body, at, "trun sample_duration")
            at += 4
        }
        var size: UInt32?
        if flags & 0x200 != 0 {
            size = try BoxReader.field(trun.body, at, "trun sample_size")
            at += 4
        }
        if flags & 0x400 != 0 {
            sampleFlags = try BoxReader.field(trun.body, at, "trun sample_flags")
        }
        isKeyFrame = sampleFlags & 0x0001_0000 == 0
        let mdat = top[1].body
        if let size, Int(size) != mdat.count {
            throw .invalid("trun says the sample has \(size) bytes, mdat holds \(mdat.count)")
        }
        guard !mdat.isEmpty else { throw .invalid("an empty mdat") }
        sample = Array(mdat)
    }
}

/// Turns the segments of one channel into Annex B access units for a decoder: the parameter sets
/// of the latest initialisation segment go before each key frame.
public struct FMP4Depacketizer: Sendable {
    public private(set) var initialization: FMP4InitializationSegment?
    private var needsParameterSets = true

    public init() {}

    /// Takes a whole segment. Returns an access unit (media) or nil (initialisation).
    public mutating func take(_ segment: [UInt8], isInitialization: Bool) throws(HEVCError) -> (accessUnit: [UInt8], media: FMP4MediaSegment)? {
        if isInitialization {
            initialization = try FMP4InitializationSegment(parsing: segment)
            needsParameterSets = true
            return nil
        }
        guard let initialization else { throw .missingParameterSets("a media segment before any initialisation segment") }
        let media = try FMP4MediaSegment(parsing: segment)
        let prefix = media.isKeyFrame || needsParameterSets ? initialization.parameterSets : nil
        if media.isKeyFrame { needsParameterSets = false }
        let unit = try HEVCSample.annexB(sample: media.sample, prefix: prefix)
        return (unit, media)
    }
}
