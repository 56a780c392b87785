/// Which of the device's two video streams (PROTOCOL.md 4 `stream_type`, 5 `streams`).
public enum StreamType: Int, Sendable, CaseIterable, Hashable {
    /// The profile's main resolution.
    case main = 0
    /// Its small one.
    case sub = 1

    init(reading reader: JSONObjectReader, key: String) throws(WireError) {
        let raw = try reader.int(key)
        guard let value = StreamType(rawValue: Int(clamping: raw)) else {
            throw .invalidValue(field: reader.fieldPath(key), value: String(raw), expected: "0 (main) or 1 (sub)")
        }
        self = value
    }
}
