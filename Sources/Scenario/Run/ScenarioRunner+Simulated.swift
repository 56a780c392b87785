import Foundation

/// `ipcemu scenario run --simulated` (docs/scenarios.md, "Simulated time"): the same steps on the
/// deterministic simulator's clock (`SimulatedWorld`).
extension ScenarioRunner {
    static func runSimulated(_ scenario: Scenario, appMode: AppMode) async -> ScenarioResult {
        let started = Date()
        func refused(_ why: String) -> ScenarioResult {
            ScenarioResult(scenario: scenario, appMode: appMode, brokerURL: "(simulated broker)", startedAt: started, endedAt: Date(),
                           setupError: why, steps: [], observations: [], calls: [])
        }
        if let why = SimulatedWorld.unsupported(scenario, appMode: appMode) {
            return refused("not supported under --simulated: \(why)")
        }
        let world: SimulatedWorld
        do {
            world = try SimulatedWorld(scenario)
        } catch {
            return refused("cannot build the simulated world: \(error)")
        }
        let result = await ScenarioRunner(scenario: scenario, world: world).run()
        await world.close()
        return result
    }
}
