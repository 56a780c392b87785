import Foundation
import IPCWire

/// How log lines look: human-readable by default; JSON Lines for machines (`--log-format json`).
public enum LogFormat: String, Sendable, CaseIterable {
    case human
    case json
}

public enum LogLevel: String, Sendable, Comparable, CaseIterable {
    case debug, info, warning, error

    private var rank: Int {
        switch self {
        case .debug: 0
        case .info: 1
        case .warning: 2
        case .error: 3
        }
    }

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rank < b.rank }
}

/// A thread-safe line writer: one line per call event in or out, plus lifecycle lines.
/// Lines never interleave: each is handed to `write(2)` whole.
public final class EventLog: Sendable {
    public enum Direction: Sendable {
        case inbound, outbound
        var arrow: String { self == .inbound ? "<-" : "->" }
    }

    public let format: LogFormat
    public let minimumLevel: LogLevel
    private let fd: Int32
    private let clock: @Sendable () -> Date

    public init(format: LogFormat = .human, minimumLevel: LogLevel = .info, fileDescriptor: Int32 = 2,
                clock: @escaping @Sendable () -> Date = { Date() }) {
        self.format = format
        self.minimumLevel = minimumLevel
        self.fd = fileDescriptor
        self.clock = clock
    }

    /// Logs one line; `fields` are rendered `key=value` (human) or as JSON members, in order.
    public func log(_ level: LogLevel, _ message: String, device: String? = nil, fields: [(String, String)] = []) {
        guard level >= minimumLevel else { return }
        writeLine(render(level, message, device: device, fields: fields))
    }

    /// One call event crossing the wire, in or out (at `level`: a refused one and its reply are
    /// debug lines, its rate-limited refusal line says what happened).
    public func callEvent(_ direction: Direction, _ message: CallMessage, device: String, level: LogLevel = .info) {
        guard level >= minimumLevel else { return }
        var fields = [
            ("session", message.sessionId),
            direction == .inbound ? ("from", message.curId) : ("to", message.targetId),
        ]
        if let reason = message.reason { fields.append(("reason", reason)) }
        if let callType = message.callType { fields.append(("callType", String(callType.rawValue))) }
        log(level, "\(direction.arrow) \(message.event.rawValue)", device: device, fields: fields)
    }

    func render(_ level: LogLevel, _ message: String, device: String?, fields: [(String, String)]) -> String {
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
