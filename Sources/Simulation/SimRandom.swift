import Foundation

/// The simulator's one source of randomness: xoshiro256** seeded through SplitMix64, so a run is a
/// pure function of its seed (no system randomness, no hashing seeds, no clocks). Every choice the
/// simulator makes (workload, faults, delays, session ids) draws from one of these.
public struct SimRandom: RandomNumberGenerator, Sendable {
    private var s0: UInt64
    private var s1: UInt64
    private var s2: UInt64
    private var s3: UInt64

    public init(seed: UInt64) {
        var sm = seed
        func splitMix(_ x: inout UInt64) -> UInt64 {
            x &+= 0x9E37_79B9_7F4A_7C15
            var z = x
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s0 = splitMix(&sm)
        s1 = splitMix(&sm)
        s2 = splitMix(&sm)
        s3 = splitMix(&sm)
    }

    public mutating func next() -> UInt64 {
        let result = rotl(s1 &* 5, 7) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = rotl(s3, 45)
        return result
    }

    private func rotl(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 &- k)) }

    /// A generator for a sub-stream (a node, the workload), independent of later draws from this one.
    public mutating func fork() -> SimRandom { SimRandom(seed: next()) }

    /// 0..<bound (bound 0 or less gives 0).
    public mutating func below(_ bound: Int) -> Int {
        guard bound > 1 else { return 0 }
        return Int(next(upperBound: UInt64(bound)))
    }

    /// lower...upper (inclusive; an empty range gives lower).
    public mutating func int(_ lower: Int64, _ upper: Int64) -> Int64 {
        guard upper > lower else { return lower }
        let span = UInt64(bitPattern: upper &- lower) &+ 1
        if span == 0 { return Int64(bitPattern: next()) }
        return lower &+ Int64(bitPattern: next(upperBound: span))
    }

    /// A uniform double in [0, 1).
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool { p > 0 && unit() < p }

    /// An exponentially distributed duration with this mean (ms), at least 1.
    public mutating func exponential(meanMs: Double) -> Int64 {
        let u = min(unit(), 1 - 1e-12)
        let ms = -meanMs * log1p(-u)
        return max(1, Int64(min(ms, 86_400_000)))
    }

    /// One element of a non-empty array.
    public mutating func pick<T>(_ items: [T]) -> T? {
        items.isEmpty ? nil : items[below(items.count)]
    }
}

/// FNV-1a, 64 bits: a stable hash (Swift's `Hasher` is seeded per process) for trace hashes and
/// session id bookkeeping.
public struct StableHash: Sendable, Equatable {
    public private(set) var value: UInt64 = 0xCBF2_9CE4_8422_2325

    public init() {}

    public mutating func add(_ text: String) {
        for byte in text.utf8 { add(byte: byte) }
        add(byte: 0xFF)
    }

    public mutating func add(_ number: Int64) {
        var x = UInt64(bitPattern: number)
        for _ in 0..<8 {
            add(byte: UInt8(truncatingIfNeeded: x))
            x >>= 8
        }
    }

    @inline(__always)
    public mutating func add(byte: UInt8) {
        value ^= UInt64(byte)
        value = value &* 0x100_0000_01B3
    }

    public static func of(_ text: String) -> UInt64 {
        var h = StableHash()
        h.add(text)
        return h.value
    }
}
