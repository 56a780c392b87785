import CallRuntime
import Foundation
import HTTPTransfer

/// Where a device's pushes go (PROTOCOL.md 8.8; the profile's `push` section, changeable at run time).
public struct PushConfiguration: Sendable, Equatable {
    /// POST one `PushMessage` per household user here (`http://` or `https://`); nil: no POSTs.
    public var url: String?
    /// Write one `<msgid>-<uid>.apns` file per user into this folder (made if missing); nil: none.
    public var apnsDir: String?
    /// The `Simulator Target Bundle` of the `.apns` files: the bundle id of the app under test.
    public var simulatorBundle: String
    /// How long one POST may take, connection included.
    public var timeout: Duration

    public static let defaultSimulatorBundle = "com.ipcemu.doorbell-app"

    public init(url: String? = nil, apnsDir: String? = nil, simulatorBundle: String = PushConfiguration.defaultSimulatorBundle,
                timeout: Duration = .seconds(2)) {
        self.url = url
        self.apnsDir = apnsDir
        self.simulatorBundle = simulatorBundle
        self.timeout = timeout
    }

    /// True when a press is pushed anywhere.
    public var isEnabled: Bool { url != nil || apnsDir != nil }
}

/// Sends a device's pushes (PROTOCOL.md 8.8): for each press, one HTTP POST per household user to
/// `url` with a `PushMessage`, and with `apnsDir` one `.apns` file per user. The POSTs of a press
/// go out together, each bounded by the configuration's timeout. A push that fails is logged and
/// counted, and never retried: nothing of one press is carried into a later one. The faults (a
/// delay before a press's pushes, a share of pushes lost) are set at run time; a lost push is
/// neither POSTed nor written, only counted.
///
/// `send` returns once the press's pushes are done (after the delay); the device calls it from a
/// task of its own so that a slow push server never holds a call.
public actor PushSender {
    /// Totals over every press; they only grow (`lastFailure` aside).
    public struct Counters: Sendable, Equatable {
        public var presses = 0
        public var sent = 0
        public var failed = 0
        public var lost = 0
        public var filesWritten = 0
        public var fileFailures = 0
        /// What went wrong last (a POST or a file), for the control API and logs.
        public var lastFailure: String?
    }

    public private(set) var configuration: PushConfiguration
    public private(set) var faults = PushFaults()
    private var totals = Counters()
    private let log: EventLog?
    /// A number in 0..<1 per push, for the loss fault (injected by tests).
    private let random: @Sendable () -> Double

    /// The delay fault waits on these (the device's clock and scheduler: simulated time too).
    private let clock: any EngineClock
    private let scheduler: any TimerScheduling

    public init(configuration: PushConfiguration, log: EventLog? = nil,
                random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
                clock: any EngineClock = SystemClock(), scheduler: any TimerScheduling = TimerScheduler.shared) {
        self.configuration = configuration
        self.log = log
        self.random = random
        self.clock = clock
        self.scheduler = scheduler
    }

    public var counters: Counters { totals }

    public func setConfiguration(_ configuration: PushConfiguration) { self.configuration = configuration }

    /// Sets the faults; out-of-range values change nothing and throw naming the field.
    public func setFaults(_ faults: PushFaults) throws(PushFaultError) {
        try faults.validate()
        self.faults = faults
    }

    /// Pushes one press to `users` (the household). Returns what happened to each push.
    @discardableResult
    public func send(press: PushPress, users: [String]) async -> PushOutcome {
        let configuration = self.configuration
        let faults = self.faults
        totals.presses += 1
        guard configuration.isEnabled, !users.isEmpty else { return PushOutcome() }
        if faults.delaySeconds > 0 {
            let delay = Duration.milliseconds(WallClock.milliseconds(seconds: faults.delaySeconds))
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                scheduler.schedule(after: delay, on: clock) { done.resume() }
            }
        }
        var outcome = PushOutcome()
        var delivered: [String] = []
        for user in users {
            if faults.lossShare > 0, random() < faults.lossShare {
                outcome.lost += 1
            } else {
                delivered.append(user)
            }
        }
        if let dir = configuration.apnsDir {
            for user in delivered {
                if let why = Self.writeAPNs(press: press, uid: user, bundle: configuration.simulatorBundle, dir: dir) {
                    outcome.fileFailures += 1
                    note(failure: why, press: press, uid: user)
                } else {
                    outcome.filesWritten += 1
                }
            }
        }
        if let url = configuration.url, !delivered.isEmpty {
            let timeout = configuration.timeout
            let results = await withTaskGroup(of: (String, String?).self) { group in
                for user in delivered {
                    group.addTask { (user, await Self.post(PushMessage(press: press, uid: user), to: url, timeout: timeout)) }
                }
                var all: [(String, String?)] = []
                for await result in group { all.append(result) }
                return all
            }
            for (user, failure) in results {
                if let failure {
                    outcome.failed += 1
                    note(failure: failure, press: press, uid: user)
                } else {
                    outcome.sent += 1
                }
            }
        }
        totals.sent += outcome.sent
        totals.failed += outcome.failed
        totals.lost += outcome.lost
        totals.filesWritten += outcome.filesWritten
        totals.fileFailures += outcome.fileFailures
        if outcome.lost > 0 {
            log?.log(.info, "push loss fault dropped pushes", device: press.devId,
                     fields: [("msgid", press.callId), ("lost", "\(outcome.lost)")])
        }
        return outcome
    }

    private func note(failure: String, press: PushPress, uid: String) {
        totals.lastFailure = failure
        log?.log(.warning, "push failed (not retried)", device: press.devId,
                 fields: [("msgid", press.callId), ("uid", uid), ("why", failure)])
    }

    /// One POST; nil when the server answered 2xx, else why not.
    static func post(_ message: PushMessage, to url: String, timeout: Duration) async -> String? {
        let body: Data
        do { body = try JSONEncoder().encode(message) } catch { return "cannot encode the push: \(error)" }
        let request = HTTPTransferRequest(
            method: "POST", url: url, headers: [("Content-Type", "application/json"), ("User-Agent", "ipcemu-push")],
            body: Array(body), timeout: timeout, tls12Minimum: false)
        do {
            // A short answer is read (and dropped); a long one is cut.
            let response = try await HTTPTransfer.perform(request, bodyLimit: 64 << 10)
            guard (200..<300).contains(response.status) else { return "\(url) answered \(response.status)" }
            return nil
        } catch {
            return "POST \(url): \(error)"
        }
    }

    /// Writes `<msgid>-<uid>.apns` into `dir` (made if missing); nil on success, else why not.
    static func writeAPNs(press: PushPress, uid: String, bundle: String, dir: String) -> String? {
        let payload = APNsPayload(press: press, uid: uid, bundle: bundle)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let path = (dir.hasSuffix("/") ? dir : dir + "/") + APNsPayload.fileName(msgid: press.callId, uid: uid)
        do {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            try encoder.encode(payload).write(to: URL(fileURLWithPath: path), options: .atomic)
            return nil
        } catch {
            return "cannot write \(path): \(error.localizedDescription)"
        }
    }
}
