import ArgumentParser
import CallEngine
import CallRuntime
import DeviceProfile
import Dispatch
import Foundation
import Logging
import MQTTTransport
import Synchronization

/// Exit codes of `ipcemu app call` (and friends): what happened to the call.
enum CallExitCode: Int32, CaseIterable {
    case answered = 0
    case failed = 1
    case rejected = 3
    case busy = 4
    case notAnswered = 5
    case noDevice = 6

    var meaning: String {
        switch self {
        case .answered: "answered"
        case .failed: "failed (stopped, cancelled, or an error)"
        case .rejected: "rejected"
        case .busy: "busy"
        case .notAnswered: "not answered"
        case .noDevice: "no answer from the device or broker at all"
        }
    }
}

/// Prints one line to standard output at once (unbuffered: a pipe reader sees it immediately).
func say(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

/// Prints to standard error, for humans.
func note(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Loads a profile or fails with the loader's own message (file:line: field: expected).
func loadProfile(_ path: String) throws -> DeviceProfile {
    do {
        return try DeviceProfile.load(path: path)
    } catch {
        throw ValidationError(error.description)
    }
}

/// MQTT options for a broker URL, with TLS files when the scheme is mqtts.
func connectionOptions(brokerURL: String, clientID: String, caFile: String?, certFile: String?,
                       keyFile: String?) throws -> MQTTClientOptions {
    var options: MQTTClientOptions
    let endpoint: MQTTBrokerEndpoint
    do {
        options = try MQTTClientOptions(brokerURL: brokerURL, clientID: clientID)
        endpoint = try MQTTBrokerEndpoint(url: brokerURL)
    } catch {
        throw ValidationError("--broker: \(error)")
    }
    if endpoint.usesTLS {
        let ca = caFile ?? "/etc/ssl/certs/ca-certificates.crt"
        guard FileManager.default.isReadableFile(atPath: ca) else {
            throw ValidationError("mqtts needs a CA file: '\(ca)' cannot be read (use --ca-file or broker.caFile)")
        }
        options.tls = MQTTTLSOptions(caFile: ca, certFile: certFile, keyFile: keyFile)
    }
    return options
}

/// Waits for SIGTERM or SIGINT and returns which one came. With `exitDeadline` the teardown that
/// follows is bounded (issue 10): a second SIGTERM or SIGINT ends the process at once with status
/// 128 + the signal, and a teardown still running `exitDeadline` after the first signal ends it
/// with status 1; each says so on stderr first.
func waitForTerminationSignal(exitDeadline: Duration? = nil) async -> Int32 {
    signal(SIGTERM, SIG_IGN)
    signal(SIGINT, SIG_IGN)
    return await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
        let once = ResumeOnce(continuation)
        let queue = DispatchQueue(label: "ipcemu.signals")
        for sig in [SIGTERM, SIGINT] {
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            source.setEventHandler {
                let first = once.resume(sig)
                guard let exitDeadline else { return }
                if !first {
                    Logger(label: "ipcemu.lifecycle").error("ipcemu: second \(signalName(sig)) during shutdown: exiting now")
                    _exit(128 + sig)
                }
                let (seconds, attoseconds) = exitDeadline.components
                let nanoseconds = Int(clamping: seconds) &* 1_000_000_000 &+ Int(attoseconds / 1_000_000_000)
                queue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
                    Logger(label: "ipcemu.lifecycle").error("ipcemu: shutdown did not finish within \(exitDeadline): exiting now")
                    _exit(1)
                }
            }
            source.resume()
            // Dispatch makes its sources as `DispatchSource` objects, which are Sendable.
            if let kept = source as? DispatchSource {
                once.keep(kept)
            } else {
                Logger(label: "ipcemu.lifecycle").error("ipcemu: cannot keep the \(signalName(sig)) handler")
            }
        }
    }
}

func signalName(_ sig: Int32) -> String { sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "signal \(sig)" }

/// Resumes a continuation exactly once and keeps the signal sources alive meanwhile.
final class ResumeOnce: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Int32, Never>?
        var sources: [DispatchSource] = []
    }
    private let state: Mutex<State>

    init(_ c: CheckedContinuation<Int32, Never>) { state = Mutex(State(continuation: c)) }

    func keep(_ s: DispatchSource) { state.withLock { $0.sources.append(s) } }

    /// True the first time (the continuation resumed), false after.
    @discardableResult
    func resume(_ value: Int32) -> Bool {
        let c = state.withLock { s in
            defer { s.continuation = nil }
            return s.continuation
        }
        c?.resume(returning: value)
        return c != nil
    }
}

/// Log options shared by the long-running commands.
struct LogOptions: ParsableArguments {
    @Option(help: "Log format (json: one JSON object per line).")
    var logFormat: LogFormatOption = .human

    @Option(help: "Least severe level logged.")
    var logLevel: LogLevelOption = .info
}

/// Seconds as a Duration.
func seconds(_ s: Double) -> Duration { .milliseconds(Int64((s * 1000).rounded())) }
