import Foundation
import IPCWire
// The log's levels and logger are swift-log's: whoever imports CallRuntime can name them.
@_exported import Logging

/// The call-event façade over a swift-log `Logger`: a line per call event in or out, plus lifecycle
/// lines, with the device and ordered `key=value` fields as metadata. Every line goes through the
/// logger's handler (in `ipcemu`, the `EventLogHandler` bootstrapped from `--log-format` and
/// `--log-level`); this type writes nothing itself.
public struct EventLog: Sendable {
    public enum Direction: Sendable {
        case inbound, outbound
        var arrow: String { self == .inbound ? "<-" : "->" }
    }

    public let logger: Logger

    /// Lines through `logger` (its handler and level decide where they go and which are kept).
    public init(logger: Logger) {
        self.logger = logger
    }

    /// Lines through a logger of its own: an `EventLogHandler` writing `format` at `minimumLevel`
    /// and above to `fileDescriptor` (libraries and tests, which do not bootstrap swift-log).
    public init(format: LogFormat = .human, minimumLevel: LogLevel = .info, fileDescriptor: Int32 = 2,
                clock: @escaping @Sendable () -> Date = { Date() }) {
        self.logger = Logger(label: "ipcemu") { _ in
            EventLogHandler(format: format, level: minimumLevel, fileDescriptor: fileDescriptor, clock: clock)
        }
    }

    /// The least severe level this log keeps.
    public var minimumLevel: LogLevel { logger.logLevel }

    /// Logs one line; `fields` are rendered `key=value` (human) or as JSON members, in order.
    /// The message and the fields are built only when the level is kept (a fleet at `--log-level
    /// error` skips every info line's strings: they showed in a 100,000-device reconnect storm).
    public func log(_ level: LogLevel, _ message: @autoclosure () -> String, device: String? = nil,
                    fields: @autoclosure () -> [(String, String)] = []) {
        guard level >= logger.logLevel else { return }
        logger.log(level: level, "\(message())", metadata: EventLogHandler.metadata(device: device, fields: fields()))
    }

    /// One call event crossing the wire, in or out (at `level`: a refused one and its reply are
    /// debug lines, its rate-limited refusal line says what happened).
    public func callEvent(_ direction: Direction, _ message: CallMessage, device: String, level: LogLevel = .info) {
        guard level >= logger.logLevel else { return }
        var fields = [
            ("session", message.sessionId),
            direction == .inbound ? ("from", message.curId) : ("to", message.targetId),
        ]
        if let reason = message.reason { fields.append(("reason", reason)) }
        if let callType = message.callType { fields.append(("callType", String(callType.rawValue))) }
        log(level, "\(direction.arrow) \(message.event.rawValue)", device: device, fields: fields)
    }
}
