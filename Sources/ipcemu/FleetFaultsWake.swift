import ControlAPI
import ControlAPISpec
import Foundation

/// `ipcemu fleet-faults --wake N` and `--wake-rate R --seconds S`: wake storms through a fleet
/// process's control API (`POST /api/fleet/faults/wake`; PROTOCOL.md 8.4, issue 20 item 9). The
/// fleet wakes and times them; this prints what it asked and the fleet's counts once the wakes
/// it sent are done.
extension FleetFaultsCommand {
    /// What a steady wake rate came to.
    struct WakeRateResult: Encodable {
        var wakesPerSecond: Double
        var seconds: Double
        /// Requests to the control API (one about every 100 ms).
        var requests: Int
        var woken: Int
        var wereAsleep: Int
        /// The fleet's state once no woken device was still waking (or after 10 s).
        var fleet: Components.Schemas.FleetState?
    }

    static func wake(_ count: Int, client: ControlClient) async throws -> Components.Schemas.FleetWakeReply {
        let body = Components.Schemas.FleetWakeRequest(count: count)
        return try await client.call("POST /api/fleet/faults/wake") {
            try await $0.fleetWake(body: .json(body)).accepted.body.json
        }
    }

    /// `rate` random wakes a second for `seconds`: a request every 100 ms with the wakes due by
    /// then (the fraction carried over), then the fleet's state once the wakes are done.
    static func wake(rate: Double, seconds: Double, client: ControlClient) async throws -> WakeRateResult {
        let clock = ContinuousClock()
        let began = clock.now
        let end = began + .milliseconds(Int64(seconds * 1000))
        var result = WakeRateResult(wakesPerSecond: rate, seconds: seconds, requests: 0, woken: 0, wereAsleep: 0)
        var sent = 0
        var tick = began
        while clock.now < end {
            tick += .milliseconds(100)
            let elapsed = Double((min(tick, end) - began).components.attoseconds) / 1e18
                + Double((min(tick, end) - began).components.seconds)
            let due = Int((elapsed * rate).rounded(.down)) - sent
            if due > 0 {
                let reply = try await wake(due, client: client)
                result.requests += 1
                result.woken += reply.woken
                result.wereAsleep += reply.wereAsleep
                sent += due
            }
            if clock.now < tick { try? await Task.sleep(until: tick, clock: clock) }
        }
        let settle = clock.now + .seconds(10)
        while true {
            let state = try await client.call("GET /api/fleet") { try await $0.getFleet().ok.body.json }
            result.fleet = state
            if (state.waking ?? 0) == 0 || clock.now >= settle { break }
            try? await Task.sleep(for: .milliseconds(200))
        }
        return result
    }
}
