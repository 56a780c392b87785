import ControlAPISpec
import Emulator

/// The fleet's sleep and wake over the control API (PROTOCOL.md 8.4; issue 20 item 9): wake
/// storms (`POST /api/fleet/faults/wake`) and the power counts and wake times of GET /api/fleet.
extension ControlHandlers {
    func fleetWake(_ input: Operations.FleetWake.Input) async throws -> Operations.FleetWake.Output {
        let fleet = try await fleet()
        guard case .json(let body) = input.body, (0...1_000_000).contains(body.count) else {
            throw ControlError.badRequest("count must be an integer 0 to 1000000", field: "count")
        }
        let report = await fleet.wakeRandom(body.count)
        return .accepted(.init(body: .json(.init(woken: report.woken, wereAsleep: report.wereAsleep,
                                                 devices: report.lowPowerDevices))))
    }

    /// `state` with the low-power devices' counts and the wake times (left out when the fleet has
    /// no low-power device).
    static func addingPower(of fleet: Fleet, to state: Components.Schemas.FleetState) async -> Components.Schemas.FleetState {
        var state = state
        // Reconnect storms (Fleet.startReconnectStorm), once there was one.
        let storms = fleet.reconnectStormCounts
        if storms.started > 0 {
            state.stormsStarted = storms.started
            state.stormsCompleted = storms.completed
            if let last = fleet.lastReconnectStorm {
                state.stormDevices = last.devices
                state.stormBackOnline = last.backOnline
                state.stormRetries = last.retries
                state.stormSeconds = last.seconds
            }
        }
        let counts = await fleet.powerCounts()
        guard counts.lowPower > 0 else { return state }
        state.awake = counts.awake
        state.asleep = counts.asleep
        state.waking = counts.waking
        let wakes = fleet.wakeSummary
        state.wakesRequested = wakes.requested
        state.wakesCompleted = wakes.completed
        state.wakeLatencyP50Ms = wakes.p50Ms
        state.wakeLatencyP99Ms = wakes.p99Ms
        return state
    }
}
