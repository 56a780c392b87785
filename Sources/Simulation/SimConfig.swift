import Foundation

/// The faults a run may inject (`ipcemu simulate --faults`).
public struct FaultKinds: OptionSet, Sendable, Hashable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The broker drops a message for a subscriber (a clean-session subscriber that was away, a
    /// broker restart without persistence).
    public static let loss = FaultKinds(rawValue: 1 << 0)
    /// QoS 1 redelivery: a message arrives twice.
    public static let dup = FaultKinds(rawValue: 1 << 1)
    /// A message is held back long enough to arrive behind later ones.
    public static let reorder = FaultKinds(rawValue: 1 << 2)
    /// A heavy-tailed delivery delay (most fast, a few seconds late).
    public static let delay = FaultKinds(rawValue: 1 << 3)
    /// A client drops its MQTT connection (the broker publishes its will) and reconnects later.
    public static let disconnect = FaultKinds(rawValue: 1 << 4)
    /// A group of clients is cut off from the broker for a while (wills after the keep-alive).
    public static let partition = FaultKinds(rawValue: 1 << 5)
    /// One side's clock jumps (forward or back), and is corrected later.
    public static let clockJump = FaultKinds(rawValue: 1 << 6)

    public static let all: FaultKinds = [.loss, .dup, .reorder, .delay, .disconnect, .partition, .clockJump]
    public static let none: FaultKinds = []

    /// Names as `--faults` takes them, in a fixed order.
    public static let names: [(String, FaultKinds)] = [
        ("loss", .loss), ("dup", .dup), ("reorder", .reorder), ("delay", .delay),
        ("disconnect", .disconnect), ("partition", .partition), ("clockjump", .clockJump),
    ]

    /// Parses `all`, `none` or a comma-separated list of names; nil names what is not known.
    public static func parse(_ text: String) -> Result<FaultKinds, FaultParseError> {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        if trimmed == "all" { return .success(.all) }
        if trimmed == "none" || trimmed.isEmpty { return .success(.none) }
        var kinds: FaultKinds = []
        for part in trimmed.split(separator: ",") {
            let name = part.trimmingCharacters(in: .whitespaces)
            guard let kind = names.first(where: { $0.0 == name })?.1 else { return .failure(FaultParseError(name: name)) }
            kinds.insert(kind)
        }
        return .success(kinds)
    }

    /// The canonical text (`all`, `none`, or the names joined by commas).
    public var text: String {
        if self == .all { return "all" }
        if isEmpty { return "none" }
        return Self.names.filter { contains($0.1) }.map(\.0).joined(separator: ",")
    }
}

public struct FaultParseError: Error, Sendable, CustomStringConvertible {
    public var name: String
    public var description: String {
        "unknown fault '\(name)': expected all, none, or a comma-separated list of \(FaultKinds.names.map(\.0).joined(separator: ", "))"
    }
}

/// Everything a run is a function of.
public struct SimulationConfig: Sendable, Equatable {
    public var seed: UInt64
    /// Calls to start (an app's `startCall` or a device's press that the engine took).
    public var calls: Int
    public var devices: Int
    public var users: Int
    public var faults: FaultKinds
    /// Stop after this many steps (a prefix of the run; nil: run to the end).
    public var maxSteps: Int?
    /// Hostile senders flooding devices with messages the device must refuse.
    public var hostileSenders: Int
    /// Keep a step-by-step trace (replay).
    public var trace: Bool

    public init(seed: UInt64, calls: Int, devices: Int, users: Int, faults: FaultKinds = .all,
                maxSteps: Int? = nil, hostileSenders: Int? = nil, trace: Bool = false) {
        self.seed = seed
        self.calls = max(0, calls)
        self.devices = max(1, devices)
        self.users = max(1, users)
        self.faults = faults
        self.maxSteps = maxSteps
        self.hostileSenders = hostileSenders ?? max(1, min(8, devices / 100 + 1))
        self.trace = trace
    }
}

/// How often things happen (per-mille and milliseconds); fixed, so a seed alone decides a run.
struct Rates {
    /// Mean gap between call starts across the whole system, per device (ms).
    static let meanCallGapPerDeviceMs: Double = 90_000
    static let baseDelayMinMs: Int64 = 2
    static let baseDelayMaxMs: Int64 = 40
    static let lossChance = 0.01
    static let dupChance = 0.01
    static let reorderChance = 0.01
    static let delaySpikeChance = 0.02
    /// Per node and simulated hour.
    static let disconnectsPerHour = 0.5
    static let partitionsPerHourPer1000 = 2.0
    static let clockJumpsPerHour = 0.3
    /// A link never connects / breaks during the call / comes back within the grace.
    static let linkFailChance = 0.03
    static let linkBreakChance = 0.05
    static let linkRecoverChance = 0.5
    /// Hostile messages per second per hostile sender, in bursts.
    static let hostileBurst = 40
    static let hostileBurstGapMs: Int64 = 10_000
}
