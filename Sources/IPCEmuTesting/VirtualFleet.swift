import CallRuntime

/// N virtual devices made from one template profile (`devId` with `{index}`, or any profile:
/// `-INDEX` is then appended), each a ``VirtualDevice`` with its own MQTT connection, started
/// together on one broker.
///
/// ```swift
/// var template = DeviceProfile.testDoorbell(devId: "door-{index:3}")
/// let fleet = try await VirtualFleet.start(template, count: 50, on: broker)
/// let device = fleet.devices.randomElement()!
/// ```
///
/// A thin layer over ``VirtualDevice`` and `DeviceProfile.instance(index:)`: one device actor
/// per member in this process, fine for the tens to low hundreds a unit test needs. Thousands
/// belong to `ipcemu fleet`, which shares event loops and budgets descriptors.
public final class VirtualFleet: Sendable {
    /// The members, in index order.
    public let devices: [VirtualDevice]

    /// How many devices the fleet has.
    public var count: Int { devices.count }
    /// Every member's device id, in index order.
    public var devIds: [String] { devices.map(\.devId) }
    /// Member number `index` (0-based position, whatever the first index was).
    public subscript(index: Int) -> VirtualDevice { devices[index] }

    private init(devices: [VirtualDevice]) { self.devices = devices }

    /// Starts `count` devices from `template` (instances `firstIndex ..< firstIndex + count`)
    /// and waits until every one is reachable. If one fails, the others are stopped and the
    /// error is thrown.
    /// - Parameter log: shared by every member (default: warnings and errors on standard error).
    public static func start(_ template: DeviceProfile, count: Int, on broker: TestBroker, firstIndex: Int = 0,
                             log: EventLog = EventLog(minimumLevel: .warning),
                             timeout: Duration = .seconds(10)) async throws -> VirtualFleet {
        guard count >= 0 else { throw FleetError(message: "a fleet needs a count of 0 or more, got \(count)") }
        let profiles = try (firstIndex..<(firstIndex + count)).map { try template.instance(index: $0) }
        var started: [Int: VirtualDevice] = [:]
        var failure: (any Error)?
        await withTaskGroup(of: (Int, Result<VirtualDevice, any Error>).self) { group in
            for (i, profile) in profiles.enumerated() {
                group.addTask {
                    do {
                        return (i, .success(try await VirtualDevice.start(profile, on: broker, log: log, timeout: timeout)))
                    } catch {
                        return (i, .failure(error))
                    }
                }
            }
            for await (i, result) in group {
                switch result {
                case .success(let device): started[i] = device
                case .failure(let error): failure = failure ?? error
                }
            }
        }
        if let failure {
            for device in started.values { await device.stop() }
            throw failure
        }
        return VirtualFleet(devices: (0..<count).compactMap { started[$0] })
    }

    /// Starts `count` devices from a template profile file.
    public static func start(templateAt path: String, count: Int, on broker: TestBroker, firstIndex: Int = 0,
                             log: EventLog = EventLog(minimumLevel: .warning),
                             timeout: Duration = .seconds(10)) async throws -> VirtualFleet {
        let template = try DeviceProfile.load(path: path)
        for warning in template.warnings { log.log(.warning, "profile: \(warning)") }
        return try await start(template, count: count, on: broker, firstIndex: firstIndex, log: log, timeout: timeout)
    }

    /// The member with this device id.
    public func device(_ devId: String) -> VirtualDevice? { devices.first { $0.devId == devId } }

    /// Stops every member (clean shutdown each).
    public func stop() async {
        await withTaskGroup(of: Void.self) { group in
            for device in devices { group.addTask { await device.stop() } }
        }
    }
}

/// A fleet could not be made as asked.
public struct FleetError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
