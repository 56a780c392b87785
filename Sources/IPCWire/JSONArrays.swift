/// Typed arrays for `JSONObjectReader`: each bad element is named by its index
/// (`data.video.codecs[1]`).
extension JSONObjectReader {
    public func stringArray(_ key: String) throws(WireError) -> [String] {
        var out: [String] = []
        for (i, item) in try array(key).enumerated() {
            guard case .string(let s) = item else { throw .wrongType(field: fieldPath(key) + "[\(i)]", expected: "string") }
            out.append(s)
        }
        return out
    }

    public func intArray(_ key: String) throws(WireError) -> [Int64] {
        var out: [Int64] = []
        for (i, item) in try array(key).enumerated() {
            switch item {
            case .int(let n): out.append(n)
            case .double(let d) where Int64(exactly: d) != nil: out.append(Int64(d))
            default: throw .wrongType(field: fieldPath(key) + "[\(i)]", expected: "integer")
            }
        }
        return out
    }

    /// Each element read as an object, with its indexed path.
    public func objectArray(_ key: String) throws(WireError) -> [JSONObjectReader] {
        var out: [JSONObjectReader] = []
        for (i, item) in try array(key).enumerated() {
            out.append(try JSONObjectReader(item, path: fieldPath(key) + "[\(i)]"))
        }
        return out
    }
}
