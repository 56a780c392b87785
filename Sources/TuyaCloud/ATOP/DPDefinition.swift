import IPCWire

/// One data point of the product's schema, as activation returns it (PROTOCOL.md 9.3, 8.3).
///
/// The SDK stores the schema text without reading it (`src/tuya_iot.c`, `activate_response_parse`
/// saves it under its `schemaId`). Its shape is Tuya's: a JSON array of
/// `{"id":1,"code":"switch","mode":"rw","type":"obj","property":{"type":"bool"}}`, where `type`
/// is `obj` (the value's kind is `property.type`: `bool`, `value`, `enum`, `string`, `bitmap`) or
/// `raw`.
public struct DPDefinition: Sendable, Equatable, Codable {
    public var id: Int
    /// The DP's code; nil when the schema leaves it out.
    public var code: String?
    /// `bool`, `value`, `enum`, `string`, `bitmap` or `raw`.
    public var type: String
    /// `rw`, `ro` or `wr`.
    public var mode: String
    /// The `property` object, kept as compact JSON text (ranges, enum values...).
    public var property: String?

    public init(id: Int, code: String?, type: String, mode: String, property: String?) {
        self.id = id
        self.code = code
        self.type = type
        self.mode = mode
        self.property = property
    }

    /// Parses a schema text. Each entry needs a numeric `id`, a `mode` and a kind.
    public static func parseSchema(_ text: String) throws(TuyaCloudError) -> [DPDefinition] {
        let root: JSONValue
        do { root = try JSONValue.parse(Array(text.utf8)) } catch { throw .malformedAnswer("schema: \(error)") }
        guard case .array(let entries) = root else { throw .wrongType(field: "schema", expected: "a JSON array") }
        var out: [DPDefinition] = []
        for (index, entry) in entries.enumerated() {
            let path = "schema[\(index)]"
            guard case .object(let o) = entry else { throw .wrongType(field: path, expected: "an object") }
            let id: Int
            switch o["id"] {
            case .int(let i)?: id = Int(clamping: i)
            case .string(let s)?:
                guard let i = Int(s) else { throw .wrongType(field: path + ".id", expected: "a number") }
                id = i
            case nil: throw .missingField(path + ".id")
            default: throw .wrongType(field: path + ".id", expected: "a number")
            }
            guard case .string(let mode)? = o["mode"] else { throw .missingField(path + ".mode") }
            var code: String?
            if case .string(let c)? = o["code"] { code = c }
            var property: String?
            var kind: String?
            if let p = o["property"], case .object(let po) = p {
                property = p.jsonString
                if case .string(let k)? = po["type"] { kind = k }
            }
            if case .string(let top)? = o["type"], top == "raw" { kind = "raw" }
            guard let kind else { throw .missingField(path + ".property.type") }
            out.append(DPDefinition(id: id, code: code, type: kind, mode: mode, property: property))
        }
        return out
    }
}
