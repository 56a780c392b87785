// The binary messages of the `fmp4Stream` data channel (PROTOCOL.md 7, step 4): a segment (the
// initialisation segment, or one `moof`+`mdat` holding one access unit) cut into fragments, each
// sent as one message behind a 4-byte header: kind, segment number (mod 256), fragment count,
// fragment number (1-based). Sans-IO: bytes in, bytes out.

/// What a segment is (header byte 0).
public enum FMP4SegmentKind: UInt8, Sendable, Hashable {
    /// `ftyp`+`moov`: always one fragment.
    case initialization = 0
    /// `moof`+`mdat` of one access unit.
    case media = 1
}

/// The 4-byte header of one binary message.
public struct FMP4FragmentHeader: Sendable, Hashable {
    public var kind: FMP4SegmentKind
    /// Segment number modulo 256 (the initialisation segment is number 1).
    public var segmentNumber: UInt8
    /// How many fragments the segment has (1...255).
    public var fragmentCount: UInt8
    /// This fragment's number, 1...fragmentCount.
    public var fragmentNumber: UInt8

    public static let size = 4

    public init(kind: FMP4SegmentKind, segmentNumber: UInt8, fragmentCount: UInt8, fragmentNumber: UInt8) {
        self.kind = kind
        self.segmentNumber = segmentNumber
        self.fragmentCount = fragmentCount
        self.fragmentNumber = fragmentNumber
    }

    public var bytes: [UInt8] { [kind.rawValue, segmentNumber, fragmentCount, fragmentNumber] }

    /// Reads the header of a message; errors for a short message, an unknown kind, a zero count, a
    /// fragment number outside 1...count.
    public init(parsing message: some Collection<UInt8>) throws(FMP4FramingError) {
        guard message.count >= Self.size else { throw .messageTooShort(size: message.count) }
        var bytes = message.makeIterator()
        let kindByte = bytes.next() ?? 0xFF
        let number = bytes.next() ?? 0
        let count = bytes.next() ?? 0
        let index = bytes.next() ?? 0
        guard let kind = FMP4SegmentKind(rawValue: kindByte) else { throw .unknownKind(kindByte) }
        guard count >= 1 else { throw .zeroFragmentCount(segment: number) }
        guard index >= 1, index <= count else {
            throw .fragmentNumberOutOfRange(segment: number, number: index, count: count)
        }
        self.init(kind: kind, segmentNumber: number, fragmentCount: count, fragmentNumber: index)
    }
}

/// Everything that can be wrong with the binary messages (sender or receiver side).
public enum FMP4FramingError: Error, Sendable, Hashable, CustomStringConvertible {
    case messageTooShort(size: Int)
    case unknownKind(UInt8)
    case zeroFragmentCount(segment: UInt8)
    case fragmentNumberOutOfRange(segment: UInt8, number: UInt8, count: UInt8)
    /// A fragment with a header and nothing after it.
    case emptyFragment(segment: UInt8, number: UInt8)
    /// A fragment carries more than `FMP4Framing.maximumFragmentPayload` bytes.
    case fragmentTooLarge(size: Int, limit: Int)
    /// A fragment that is not the next one of the segment being reassembled (out of order,
    /// missing, repeated, or of another segment before this one was complete).
    case unexpectedFragment(expected: String, got: String)
    /// A later fragment whose count or kind differs from the segment's first fragment.
    case inconsistentHeader(segment: UInt8, why: String)
    /// A segment would be larger than the limit (sender: more than 255 fragments; receiver: the
    /// reassembly limit).
    case segmentTooLarge(size: Int, limit: Int)
    /// An initialisation segment that does not fit one fragment.
    case initializationSegmentSplit(fragments: Int)

    public var description: String {
        switch self {
        case .messageTooShort(let size): "binary message of \(size) bytes is shorter than the 4-byte header"
        case .unknownKind(let kind): "segment kind \(kind) is neither 0 (initialisation) nor 1 (media)"
        case .zeroFragmentCount(let segment): "segment \(segment) has a fragment count of 0"
        case .fragmentNumberOutOfRange(let segment, let number, let count):
            "segment \(segment): fragment number \(number) is outside 1...\(count)"
        case .emptyFragment(let segment, let number): "segment \(segment): fragment \(number) carries no bytes"
        case .fragmentTooLarge(let size, let limit): "fragment of \(size) bytes exceeds the \(limit)-byte limit"
        case .unexpectedFragment(let expected, let got): "expected \(expected), got \(got)"
        case .inconsistentHeader(let segment, let why): "segment \(segment): \(why)"
        case .segmentTooLarge(let size, let limit): "segment of \(size) bytes exceeds the \(limit)-byte limit"
        case .initializationSegmentSplit(let n): "an initialisation segment must be one fragment, this one needs \(n)"
        }
    }
}

public enum FMP4Framing {
    /// Largest binary message: 16 KiB, header included (so a fragment is at most 16 KiB either way
    /// PROTOCOL.md 7 is read).
    public static let maximumMessageSize = 16 * 1024
    /// Largest fragment payload: the message limit less the header.
    public static let maximumFragmentPayload = maximumMessageSize - FMP4FragmentHeader.size
    /// Largest segment that can be sent: 255 fragments.
    public static let maximumSegmentSize = 255 * maximumFragmentPayload

    /// Cuts a segment into messages (header + fragment), in order. Errors: an empty segment, one
    /// needing more than 255 fragments, an initialisation segment needing more than one.
    public static func messages(
        for segment: [UInt8], kind: FMP4SegmentKind, segmentNumber: UInt8,
        fragmentPayload: Int = maximumFragmentPayload
    ) throws(FMP4FramingError) -> [[UInt8]] {
        let payload = max(1, min(fragmentPayload, maximumFragmentPayload))
        guard !segment.isEmpty else { throw .emptyFragment(segment: segmentNumber, number: 1) }
        let count = (segment.count + payload - 1) / payload
        guard count <= 255 else { throw .segmentTooLarge(size: segment.count, limit: 255 * payload) }
        if kind == .initialization, count > 1 { throw .initializationSegmentSplit(fragments: count) }
        var out: [[UInt8]] = []
        out.reserveCapacity(count)
        var start = 0
        var number: UInt8 = 1
        while start < segment.count {
            let end = min(segment.count, start + payload)
            var message = FMP4FragmentHeader(
                kind: kind, segmentNumber: segmentNumber, fragmentCount: UInt8(count), fragmentNumber: number
            ).bytes
            message.reserveCapacity(FMP4FragmentHeader.size + end - start)
            message.append(contentsOf: segment[start..<end])
            out.append(message)
            start = end
            number &+= 1
        }
        return out
    }
}

/// A whole segment put back together.
public struct FMP4Segment: Sendable, Hashable {
    public var kind: FMP4SegmentKind
    public var number: UInt8
    public var bytes: [UInt8]

    public init(kind: FMP4SegmentKind, number: UInt8, bytes: [UInt8]) {
        self.kind = kind
        self.number = number
        self.bytes = bytes
    }
}

/// Puts the messages of the data channel back into segments (the app's side). The channel is
/// ordered, so fragments of a segment come one after the other: anything else is an error, the
/// partial segment is dropped and counted, and reassembly starts again at the next first fragment.
/// Never traps on any input.
public struct FMP4Reassembler: Sendable {
    /// Largest segment accepted.
    public let segmentLimit: Int

    /// Counters; they only grow.
    public struct Statistics: Sendable, Hashable {
        public var messages = 0
        public var segments = 0
        public var initializationSegments = 0
        /// Messages refused (each `accept` that threw).
        public var errors = 0
        /// Partial segments dropped (an error, or a new first fragment before the last one).
        public var segmentsDropped = 0
        /// Media segment numbers skipped (a number that is not the previous one + 1 mod 256).
        public var segmentNumberGaps = 0
        public init() {}
    }

    public private(set) var stats = Statistics()
    private var partial: (header: FMP4FragmentHeader, bytes: [UInt8])?
    private var lastNumber: UInt8?

    public init(segmentLimit: Int = FMP4Framing.maximumSegmentSize) {
        self.segmentLimit = max(1, segmentLimit)
    }

    /// Takes one binary message. Returns the segment it completes, nil when more fragments are
    /// due; throws for a message that breaks the framing (then nothing partial is kept).
    public mutating func accept(_ message: [UInt8]) throws(FMP4FramingError) -> FMP4Segment? {
        stats.messages += 1
        do {
            return try take(message)
        } catch {
            stats.errors += 1
            if partial != nil {
                partial = nil
                stats.segmentsDropped += 1
            }
            throw error
        }
    }

    private mutating func take(_ message: [UInt8]) throws(FMP4FramingError) -> FMP4Segment? {
        let header = try FMP4FragmentHeader(parsing: message)
        let payloadSize = message.count - FMP4FragmentHeader.size
        guard payloadSize > 0 else { throw .emptyFragment(segment: header.segmentNumber, number: header.fragmentNumber) }
        guard payloadSize <= FMP4Framing.maximumFragmentPayload else {
            throw .fragmentTooLarge(size: payloadSize, limit: FMP4Framing.maximumFragmentPayload)
        }
        if header.kind == .initialization, header.fragmentCount != 1 {
            throw .initializationSegmentSplit(fragments: Int(header.fragmentCount))
        }
        let payload = message[FMP4FragmentHeader.size...]
        var bytes: [UInt8]
        if let current = partial {
            let expected = current.header.fragmentNumber &+ 1
            if header.fragmentNumber == 1 {
                // A new segment began before this one ended (its last fragments are lost): the
                // partial one is dropped and counted, the new one taken.
                partial = nil
                stats.segmentsDropped += 1
                return try take(message)
            }
            guard header.segmentNumber == current.header.segmentNumber, header.fragmentNumber == expected else {
                throw .unexpectedFragment(
                    expected: "fragment \(expected) of segment \(current.header.segmentNumber)",
                    got: "fragment \(header.fragmentNumber) of segment \(header.segmentNumber)")
            }
            guard header.fragmentCount == current.header.fragmentCount, header.kind == current.header.kind else {
                throw .inconsistentHeader(
                    segment: header.segmentNumber,
                    why: "fragment \(header.fragmentNumber) says kind \(header.kind.rawValue) of \(header.fragmentCount) fragments, "
                        + "fragment 1 said kind \(current.header.kind.rawValue) of \(current.header.fragmentCount)")
            }
            bytes = current.bytes
        } else {
            guard header.fragmentNumber == 1 else {
                throw .unexpectedFragment(
                    expected: "fragment 1 of a segment",
                    got: "fragment \(header.fragmentNumber) of \(header.fragmentCount) of segment \(header.segmentNumber)")
            }
            bytes = []
        }
        guard bytes.count + payloadSize <= segmentLimit else {
            throw .segmentTooLarge(size: bytes.count + payloadSize, limit: segmentLimit)
        }
        bytes.append(contentsOf: payload)
        guard header.fragmentNumber == header.fragmentCount else {
            partial = (header, bytes)
            return nil
        }
        partial = nil
        stats.segments += 1
        if header.kind == .initialization {
            stats.initializationSegments += 1
        } else if let last = lastNumber, header.segmentNumber != last &+ 1 {
            stats.segmentNumberGaps += 1
        }
        lastNumber = header.segmentNumber
        return FMP4Segment(kind: header.kind, number: header.segmentNumber, bytes: bytes)
    }
}
