import Foundation
import IPCWire
import Logging

/// How log lines look: human-readable by default; JSON Lines for machines (`--log-format json`).
public enum LogFormat: String, Sendable, CaseIterable {
    case human
    case json
}

/// The levels are swift-log's (`--log-level` offers debug, info, warning and error).
public typealias LogLevel = Logger.Level

/// The swift-log handler every log line of ipcemu goes through: one line per `log` call, in the
/// human format (`2024-11-21T00:00:00.000Z INFO  [dev1] message key=value ...`) or as one JSON object
/// per line, handed to `write(2)` whole so lines never interleave.
///
/// Metadata: `device` is the bracketed device (a `device` member in JSON); the ordered fields an
/// `EventLog` passes under `fields` (pairs, see `metadata(device:fields:)`) come next, in order; any
/// other metadata (a logger's own, a provider's) follows sorted by key. Text from the wire cannot
/// forge a line: see `escaped` and `fieldValue`.
public struct EventLogHandler: LogHandler {
    /// The metadata key naming the device or user a line is about.
    public static let deviceKey = "device"
    /// The metadata key holding ordered `key=value` fields: an array of two-string arrays.
    public static let fieldsKey = "fields"

    public let format: LogFormat
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let fd: Int32
    private let clock: @Sendable () -> Date

    public init(format: LogFormat = .human, level: Logger.Level = .info, fileDescriptor: Int32 = 2,
                metadataProvider: Logger.MetadataProvider? = nil,
                clock: @escaping @Sendable () -> Date = { Date() }) {
        self.format = format
        self.logLevel = level
        self.fd = fileDescriptor
        self.metadataProvider = metadataProvider
        self.clock = clock
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let own = event.metadata { merged.merge(own) { _, new in new } }
        let (device, fields) = Self.split(merged)
        writeLine(render(event.level, event.message.description, device: device, fields: fields))
    }

    /// The metadata an `EventLog` line carries: the device, and its fields in order.
    public static func metadata(device: String?, fields: [(String, String)]) -> Logger.Metadata {
        var m: Logger.Metadata = [:]
        if let device { m[deviceKey] = .string(device) }
        if !fields.isEmpty { m[fieldsKey] = .array(fields.map { .array([.string($0.0), .string($0.1)]) }) }
        return m
    }

    /// The device, then the fields: the ordered ones first, the rest sorted by key.
    static func split(_ metadata: Logger.Metadata) -> (device: String?, fields: [(String, String)]) {
        var rest = metadata
        let device = rest.removeValue(forKey: deviceKey).map(\.description)
        var fields: [(String, String)] = []
        if case .array(let pairs)? = rest[fieldsKey] {
            rest.removeValue(forKey: fieldsKey)
            for pair in pairs {
                if case .array(let kv) = pair, kv.count == 2 {
                    fields.append((kv[0].description, kv[1].description))
                } else {
                    fields.append((fieldsKey, pair.description))
                }
            }
        }
        for key in rest.keys.sorted() { if let value = rest[key] { fields.append((key, value.description)) } }
        return (device, fields)
    }

    /// One line, without its newline.
    func render(_ level: Logger.Level, _ message: String, device: String?, fields: [(String, String)]) -> String {
        let ts = Self.timestamp(clock())
        switch format {
        case .human:
            var line = "\(ts) \(level.rawValue.uppercased().padding(toLength: 5, withPad: " ", startingAt: 0))"
            if let device { line += " [\(Self.escaped(device))]" }
            line += " " + Self.escaped(message)
            for (k, v) in fields { line += " \(Self.escaped(k))=" + Self.fieldValue(v) }
            return line
        case .json:
            var o: [String: JSONValue] = ["ts": .string(ts), "level": .string(level.rawValue), "msg": .string(message)]
            if let device { o["device"] = .string(device) }
            for (k, v) in fields { o[k] = .string(v) }
            return JSONValue.object(o).jsonString
        }
    }

    /// Text from the wire (ids, reasons, error texts) cannot forge a line of the human format:
    /// control characters (CR, LF, ESC, ...), DEL and the Unicode line and paragraph separators
    /// are written as escapes (`\n`, `\r`, `\t`, `\u{1b}`), and a backslash as `\\`.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\\": out += "\\\\"
            case _ where needsEscape(scalar): out += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value)
            || scalar.value == 0x2028 || scalar.value == 0x2029 || scalar == "\\"
    }

    /// A field value: bare when it is a plain word, else quoted with `"` and `\` escaped, so a
    /// value cannot end its field early and forge another (`x" level=error`).
    static func fieldValue(_ value: String) -> String {
        let plain = !value.isEmpty && !value.unicodeScalars.contains {
            $0 == " " || $0 == "\"" || $0 == "=" || needsEscape($0)
        }
        if plain { return value }
        return "\"" + escaped(value).replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    private func writeLine(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        bytes.withUnsafeBytes { buf in
            guard let base = buf.baseAddress else { return }
            var offset = 0
            while offset < buf.count {
                let n = Foundation.write(fd, base + offset, buf.count - offset)
                if n <= 0 { break }
                offset += n
            }
        }
    }

    static func timestamp(_ date: Date) -> String {
        let ms = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var t = time_t(ms / 1000)
        var parts = tm()
        gmtime_r(&t, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                      parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                      parts.tm_hour, parts.tm_min, parts.tm_sec, Int(ms % 1000))
    }
}
