import CallRuntime
import Logging
import Synchronization

/// A harness's log: errors go to stderr as before, and every line at `info` and above is also
/// kept in memory (the last `capacity`), so a failing test can print what the device and the apps
/// logged (link lost, never connected, a feed that did not start) instead of a bare "0 frames".
final class RecordedLog: Sendable {
    private let lines: Mutex<(kept: [String], dropped: Int)>
    let capacity: Int

    init(capacity: Int = 400) {
        self.capacity = max(1, capacity)
        lines = Mutex(([], 0))
    }

    /// The log to hand to a `Device` or an `AppUser`.
    var eventLog: EventLog {
        EventLog(logger: Logger(label: "ipcemu-e2e") { [self] _ in
            MultiplexLogHandler([EventLogHandler(level: .error), RecordingHandler(log: self)])
        })
    }

    fileprivate func keep(_ line: String) {
        lines.withLock { l in
            if l.kept.count >= capacity {
                l.kept.removeFirst()
                l.dropped += 1
            }
            l.kept.append(line)
        }
    }

    /// What was kept, oldest first, with a first line saying how many older lines were dropped.
    var text: String {
        lines.withLock { l in
            ((l.dropped > 0 ? ["(\(l.dropped) earlier lines dropped)"] : []) + l.kept).joined(separator: "\n")
        }
    }
}

/// Keeps `info` and above in a `RecordedLog`.
private struct RecordingHandler: LogHandler {
    let log: RecordedLog
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let own = event.metadata { merged.merge(own) { _, new in new } }
        let device = merged.removeValue(forKey: EventLogHandler.deviceKey)?.description ?? "-"
        let rendered = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        log.keep("\(event.level) [\(device)] \(event.message) \(rendered)")
    }
}
