import AppSimulator
import ArgumentParser
import CallEngine
import CallRuntime
import DeviceProfile
import Emulator
import Foundation
import IPCWire
import MQTTTransport

/// `ipcemu bench ...`: speed figures, measured on this machine (use a release build).
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure speed (build with -c release first).",
        subcommands: [Signalling.self, Media.self, FleetBench.self, Doorbell.self]
    )
}

/// Latency percentiles of a list of samples (milliseconds).
struct Percentiles {
    var sorted: [Double]

    init(_ samples: [Double]) { sorted = samples.sorted() }

    func at(_ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

    var summary: String {
        String(format: "p50 %.3f ms  p95 %.3f ms  p99 %.3f ms  max %.3f ms  (n=%d)",
               at(50), at(95), at(99), sorted.last ?? .nan, sorted.count)
    }
}

extension BenchCommand {
    struct Signalling: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make many calls on loopback and print call -> ring and answer -> app-sees-answer latency.",
            discussion: """
                Starts a private mosquitto (or uses --broker), one device from --profile with a manual \
                answer policy, and one app user. Each call: the app sends `call` and waits for `ring` \
                (call -> ring); the device operator answers and the app waits for `answer` \
                (answer -> app-sees-answer); the app hangs up and waits for the device to be idle.
                """
        )

        @Option(help: "Number of calls.") var calls: Int = 1000
        @Option(help: "Device profile.") var profile: String = "device-profiles/doorbell.yaml"
        @Option(help: "Broker URL (default: a private mosquitto).") var broker: String?
        @Option(help: "Calls made before measuring.") var warmup: Int = 20

        func validate() throws {
            guard calls >= 1 else { throw ValidationError("--calls must be at least 1") }
            guard warmup >= 0 else { throw ValidationError("--warmup must be zero or more") }
        }

        func run() async throws {
            var profile = try loadProfile(self.profile)
            if profile.isTemplate { profile = try profile.instance(index: 0) }
            profile.behaviour.answerPolicy = .manual
            var embedded: MosquittoBroker?
            let url: String
            if let broker { url = broker } else {
                embedded = try MosquittoBroker()
                url = embedded?.url ?? ""
            }
            let quiet = EventLog(minimumLevel: .error)
            let device = try Device(profile: profile, connection: connectionOptions(
                brokerURL: url, clientID: profile.identity.devId, caFile: nil, certFile: nil, keyFile: nil), log: quiet)
            try await device.start()
            guard await device.waitUntilConnected(timeout: .seconds(5)) else {
                throw ValidationError("device could not connect to \(url)")
            }
            let app = try AppUser(userId: "bench-user", connection: connectionOptions(
                brokerURL: url, clientID: "bench-user", caFile: nil, certFile: nil, keyFile: nil), log: quiet)
            try await app.start()
            let t = profile.resolvedTopics
            try await app.add(DeviceAddress(devId: profile.identity.devId, inTopic: t.in, outTopic: t.out, metaTopic: t.meta,
                                            security: profile.security, localKey: profile.identity.localKey))
            var appEvents = await app.events().makeAsyncIterator()
            var deviceEvents = await device.events().makeAsyncIterator()

            var callToRing: [Double] = []
            var answerToApp: [Double] = []
            let clock = ContinuousClock()
            let total = calls + warmup
            let started = clock.now
            for i in 0..<total {
                let t0 = clock.now
                try await app.startCall(devId: profile.identity.devId, timeoutSeconds: 30)
                guard await next(&appEvents, { if case .received(let m, _) = $0, m.event == .ring { true } else { false } }) else {
                    throw ValidationError("call \(i): no ring")
                }
                let t1 = clock.now
                try await device.answer()
                guard await next(&appEvents, { if case .received(let m, _) = $0, m.event == .answer { true } else { false } }) else {
                    throw ValidationError("call \(i): no answer")
                }
                let t2 = clock.now
                try await app.hangUp()
                guard await next(&deviceEvents, { if case .callEnded = $0 { true } else { false } }) else {
                    throw ValidationError("call \(i): the device did not end the call")
                }
                _ = await next(&appEvents, { if case .callEnded = $0 { true } else { false } })
                if i >= warmup {
                    callToRing.append(Self.ms(t1 - t0))
                    answerToApp.append(Self.ms(t2 - t1))
                }
            }
            let elapsed = Self.ms(clock.now - started) / 1000
            say("bench signalling: \(calls) calls (+\(warmup) warm-up) on \(url), security \(profile.security.rawValue), \(String(format: "%.1f", elapsed)) s")
            say("  call -> ring:             \(Percentiles(callToRing).summary)")
            say("  answer -> app sees answer: \(Percentiles(answerToApp).summary)")
            await app.stop()
            await device.stop()
            embedded?.stop()
        }

        /// Advances `iterator` to the first event that matches, or returns false after 5 s.
        private func next<E: Sendable>(_ iterator: inout AsyncStream<E>.Iterator, _ match: (E) -> Bool) async -> Bool {
            let deadline = ContinuousClock.now + .seconds(5)
            while ContinuousClock.now < deadline {
                guard let e = await iterator.next() else { return false }
                if match(e) { return true }
            }
            return false
        }

        static func ms(_ d: Duration) -> Double {
            Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
        }
    }
}
