import Foundation
import IPCWire
import Logging
import Synchronization
import Testing
@testable import CallRuntime

/// The swift-log handler every log line goes through: the human and JSON formats, the escaping
/// that stops wire text forging a line, metadata as ordered fields, and the level filter.
@Suite("Event log handler (swift-log)")
struct EventLogHandlerTests {
    private static let fixed = Date(timeIntervalSince1970: 1_732_200_000.123)

    /// A log written to a temporary file; `lines()` reads back what reached it.
    private final class Sink: Sendable {
        let path: String
        let fd: Int32

        init() throws {
            path = NSTemporaryDirectory() + "/eventlog-\(UUID().uuidString)"
            fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND, 0o600)
            try #require(fd >= 0)
        }

        func logger(_ format: LogFormat, level: Logger.Level = .info) -> Logger {
            let fd = self.fd
            return Logger(label: "test") { _ in
                EventLogHandler(format: format, level: level, fileDescriptor: fd, clock: { EventLogHandlerTests.fixed })
            }
        }

        func lines() throws -> [String] {
            try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
                .dropLast().map(String.init)
        }

        deinit {
            close(fd)
            unlink(path)
        }
    }

    @Test("human format through a Logger: time, level, device, message, fields in order")
    func human() throws {
        let sink = try Sink()
        let log = EventLog(logger: sink.logger(.human))
        log.log(.info, "call started", device: "dev1", fields: [("session", "s1"), ("from", "u1"), ("note", "two words")])
        log.log(.warning, "no device")
        #expect(try sink.lines() == [
            "2024-11-21T14:40:00.123Z INFO  [dev1] call started session=s1 from=u1 note=\"two words\"",
            "2024-11-21T14:40:00.123Z WARNI no device",
        ])
    }

    @Test("JSON format through a Logger: one object per line with the fields as members")
    func json() throws {
        let sink = try Sink()
        EventLog(logger: sink.logger(.json)).log(.error, "refused", device: "dev1", fields: [("session", "s1"), ("reason", "busy")])
        let lines = try sink.lines()
        #expect(lines.count == 1)
        let parsed = try JSONValue.parse(Array(try #require(lines.first).utf8))
        #expect(parsed == .object(["ts": .string("2024-11-21T14:40:00.123Z"), "level": .string("error"), "msg": .string("refused"),
                                   "device": .string("dev1"), "session": .string("s1"), "reason": .string("busy")]))
    }

    @Test("a call event renders as before: arrow, event, session, peer, reason")
    func callEvent() throws {
        let sink = try Sink()
        let message = CallMessage(event: .call, curId: "u1", targetId: "dev1", sessionId: "s1", reason: "x y")
        EventLog(logger: sink.logger(.human)).callEvent(.inbound, message, device: "dev1")
        #expect(try sink.lines() == ["2024-11-21T14:40:00.123Z INFO  [dev1] <- call session=s1 from=u1 reason=\"x y\""])
    }

    @Test("wire text cannot forge a line through the Logger path, in either format")
    func escaping() throws {
        let evil = "s1\n2024-11-21T00:00:00.000Z ERROR [dev1] forged\u{1b}[2K"
        for format in LogFormat.allCases {
            let sink = try Sink()
            EventLog(logger: sink.logger(format)).log(.info, evil, device: evil, fields: [("session", evil)])
            let lines = try sink.lines()
            #expect(lines.count == 1, "\(format): \(lines)")
            #expect(!(lines.first ?? "").unicodeScalars.contains { $0.value < 0x20 }, "\(format)")
        }
    }

    @Test("level filter: lines below the handler's level are dropped, the rest kept")
    func levelFilter() throws {
        let sink = try Sink()
        let log = EventLog(logger: sink.logger(.human, level: .warning))
        #expect(log.minimumLevel == .warning)
        log.log(.debug, "d")
        log.log(.info, "i")
        log.log(.warning, "w")
        log.log(.error, "e")
        let message = CallMessage(event: .call, curId: "u1", targetId: "dev1", sessionId: "s1")
        log.callEvent(.inbound, message, device: "dev1")   // info: dropped
        #expect(try sink.lines().map { $0.split(separator: " ").last.map(String.init) ?? "" } == ["w", "e"])
    }

    @Test("a dropped line's message and fields are never built; a kept one's once")
    func droppedLinesAreNotBuilt() throws {
        let sink = try Sink()
        let log = EventLog(logger: sink.logger(.human, level: .warning))
        let built = Mutex(0)
        func text(_ s: String) -> String {
            built.withLock { $0 += 1 }
            return s
        }
        log.log(.info, text("quiet"), device: "dev1", fields: [("k", text("v"))])
        #expect(built.withLock { $0 } == 0)
        log.log(.warning, text("loud"), device: "dev1", fields: [("k", text("v"))])
        #expect(built.withLock { $0 } == 2)
        #expect(try sink.lines().count == 1)
    }

    @Test("other swift-log users: logger metadata as sorted fields after the ordered ones; other levels named")
    func plainLogger() throws {
        let sink = try Sink()
        var logger = sink.logger(.human, level: .trace)
        logger[metadataKey: "zone"] = "b"
        logger[metadataKey: "area"] = "a b"
        logger.log(level: .notice, "hello", metadata: EventLogHandler.metadata(device: "dev2", fields: [("z", "1"), ("a", "2")]))
        logger.trace("t")
        #expect(try sink.lines() == [
            "2024-11-21T14:40:00.123Z NOTIC [dev2] hello z=1 a=2 area=\"a b\" zone=b",
            "2024-11-21T14:40:00.123Z TRACE t area=\"a b\" zone=b",
        ])
    }

    @Test("the default EventLog writes through its own EventLogHandler at the level asked")
    func ownHandler() throws {
        let sink = try Sink()
        let log = EventLog(format: .json, minimumLevel: .error, fileDescriptor: sink.fd, clock: { Self.fixed })
        #expect(log.minimumLevel == .error)
        #expect(log.logger.handler is EventLogHandler)
        log.log(.warning, "dropped")
        log.log(.error, "kept")
        #expect(try sink.lines().count == 1)
    }
}
