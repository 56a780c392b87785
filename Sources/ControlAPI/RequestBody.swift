import IPCWire

/// A request's JSON body, read field by field with errors that name the field.
struct RequestBody {
    let fields: [String: JSONValue]

    /// An empty body counts as `{}`.
    init(_ bytes: [UInt8]) throws(ControlError) {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            fields = [:]
            return
        }
        let value: JSONValue
        do {
            value = try JSONValue.parse(bytes)
        } catch {
            throw .badRequest("the body is not JSON: \(error)", field: nil)
        }
        guard case .object(let o) = value else { throw .badRequest("the body must be a JSON object", field: nil) }
        fields = o
    }

    /// Refuses fields the endpoint does not know (a typo must not be silently ignored).
    func only(_ allowed: [String]) throws(ControlError) {
        for key in fields.keys.sorted() where !allowed.contains(key) {
            throw .badRequest("unknown field '\(key)' (allowed: \(allowed.joined(separator: ", ")))", field: key)
        }
    }

    func has(_ key: String) -> Bool {
        if let v = fields[key], v != .null { return true }
        return false
    }

    func string(_ key: String) throws(ControlError) -> String? {
        switch fields[key] {
        case nil, .null?: return nil
        case .string(let s)?: return s
        default: throw .badRequest("\(key) must be a string", field: key)
        }
    }

    func bool(_ key: String) throws(ControlError) -> Bool? {
        switch fields[key] {
        case nil, .null?: return nil
        case .bool(let b)?: return b
        default: throw .badRequest("\(key) must be true or false", field: key)
        }
    }

    func number(_ key: String, _ rule: String) throws(ControlError) -> Double? {
        switch fields[key] {
        case nil, .null?: return nil
        case .int(let i)?: return Double(i)
        case .double(let d)? where d.isFinite: return d
        default: throw .badRequest("\(key) must be \(rule)", field: key)
        }
    }

    func integer(_ key: String, _ rule: String) throws(ControlError) -> Int64? {
        switch fields[key] {
        case nil, .null?: return nil
        case .int(let i)?: return i
        case .double(let d)? where d == d.rounded() && abs(d) < 1e15: return Int64(d)
        default: throw .badRequest("\(key) must be \(rule)", field: key)
        }
    }

    func strings(_ key: String) throws(ControlError) -> [String]? {
        switch fields[key] {
        case nil, .null?: return nil
        case .array(let a)?:
            var out: [String] = []
            for v in a {
                guard case .string(let s) = v, !s.isEmpty else {
                    throw .badRequest("\(key) must be an array of non-empty strings", field: key)
                }
                out.append(s)
            }
            return out
        default: throw .badRequest("\(key) must be an array of non-empty strings", field: key)
        }
    }
}
