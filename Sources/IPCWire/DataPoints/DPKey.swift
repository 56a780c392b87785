/// The DP ids a message may name (PROTOCOL.md 8.3 lists 115-212; Tuya's products use 1-255).
public let dpIdRange: ClosedRange<DPId> = 1...255

/// Keys of `dps` objects are DP ids as decimal strings (PROTOCOL.md 8.3).
public enum DPKey {
    /// The DP id a key names: ASCII decimal digits only (no sign, no spaces, at most 3 digits
    /// after leading zeros) within `dpIdRange`; nil otherwise. Never traps on a long key.
    public static func id(_ key: String) -> DPId? {
        let utf8 = key.utf8
        guard !utf8.isEmpty, utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        let significant = utf8.drop(while: { $0 == UInt8(ascii: "0") })
        guard significant.count <= 3 else { return nil }
        var value = 0
        for digit in significant { value = value * 10 + Int(digit - UInt8(ascii: "0")) }
        return dpIdRange.contains(value) ? value : nil
    }

    /// The key of `id` on the wire.
    public static func key(_ id: DPId) -> String { String(id) }

    /// Orders raw keys: DP ids by number first, then every other key by its text.
    static func precedes(_ a: String, _ b: String) -> Bool {
        switch (id(a), id(b)) {
        case let (x?, y?): x != y ? x < y : a < b
        case (.some, nil): true
        case (nil, .some): false
        case (nil, nil): a < b
        }
    }
}

/// One DP and its value, as a report carries it.
public struct DPEntry: Sendable, Equatable, Hashable {
    public var id: DPId
    public var value: DPValue

    public init(id: DPId, value: DPValue) {
        self.id = id
        self.value = value
    }
}
