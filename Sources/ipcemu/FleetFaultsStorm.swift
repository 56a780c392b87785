import ControlAPI
import ControlAPISpec
import Foundation

/// `ipcemu fleet-faults --reconnect-storm SECONDS [--jitter S]`: a reconnect storm through a fleet
/// process's control API (`POST /api/fleet/faults/drop-connection`). The fleet drops every
/// connection at once and brings the devices back paced per broker (jittered exponential back-off,
/// Sources/Emulator/Fleet/FleetReconnectStorm.swift); this prints the reply, then the fleet's
/// state once the storm is over (every device back online: `stormBackOnline`, `stormSeconds`).
extension FleetFaultsCommand {
    static func reconnectStorm(seconds: Double, jitter: Double, client: ControlClient,
                               timeout: Duration = .seconds(600)) async throws {
        let before = try await client.call("GET /api/fleet") { try await $0.getFleet().ok.body.json }
        let body = Components.Schemas.FleetDropConnectionRequest(seconds: seconds, jitterSeconds: jitter)
        printJSON(try await client.call("POST /api/fleet/faults/drop-connection") {
            try await $0.fleetDropConnection(body: .json(body)).accepted.body.json
        })
        let done = (before.stormsCompleted ?? 0) + 1
        let deadline = ContinuousClock.now + timeout
        while true {
            let state = try await client.call("GET /api/fleet") { try await $0.getFleet().ok.body.json }
            if (state.stormsCompleted ?? 0) >= done || ContinuousClock.now >= deadline {
                printJSON(state)
                return
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }
}
