import Foundation
import IPCWire

// What `ipcemu fleet --json` prints, one JSON object per line (docs/fleet.md), and what a fleet
// supervisor reads back from each of its workers (`ipcemu fleet --block LO:HI --json`) and
// `ipcemu bench fleet` from the fleet it runs. One set of Codable types for both ends: a field
// renamed on one side is a decoding error naming the field on the other, never a silent 0.

/// One line: its `event` and that event's fields, flat in one object.
public enum FleetLine: Sendable, Equatable {
    case note(FleetNoteLine)
    case progress(FleetProgressLine)
    case online(FleetOnlineLine)
    case power(FleetPowerCounts)
    case stopped(FleetStoppedLine)

    /// The `event` of each line.
    public enum Event: String, Codable, Sendable, CaseIterable {
        case note, progress, online, power, stopped
    }

    public var event: Event {
        switch self {
        case .note: .note
        case .progress: .progress
        case .online: .online
        case .power: .power
        case .stopped: .stopped
        }
    }

    /// The line as printed: compact JSON, keys sorted, no newline.
    public var jsonText: String {
        // Every field is a string, an integer, a finite number or a list of strings.
        JSONLineDecoding.encode(self, event: event.rawValue)
    }

    /// Reads one line; a line that is not one of these is a `FleetLineError` naming the field.
    public init(jsonLine: some Sequence<UInt8>) throws(FleetLineError) {
        do throws(JSONLineProblem) {
            self = try JSONLineDecoding.decode(FleetLine.self, from: jsonLine, events: Event.allCases.map(\.rawValue),
                                               lineKind: "fleet line")
        } catch {
            throw FleetLineError(description: error.description)
        }
    }
}

extension FleetLine: Codable {
    private enum Key: String, CodingKey { case event }

    public init(from decoder: any Decoder) throws {
        let event = try decoder.container(keyedBy: Key.self).decode(Event.self, forKey: .event)
        switch event {
        case .note: self = .note(try FleetNoteLine(from: decoder))
        case .progress: self = .progress(try FleetProgressLine(from: decoder))
        case .online: self = .online(try FleetOnlineLine(from: decoder))
        case .power: self = .power(try FleetPowerCounts(from: decoder))
        case .stopped: self = .stopped(try FleetStoppedLine(from: decoder))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(event, forKey: .event)
        switch self {
        case .note(let line): try line.encode(to: encoder)
        case .progress(let line): try line.encode(to: encoder)
        case .online(let line): try line.encode(to: encoder)
        case .power(let counts): try counts.encode(to: encoder)
        case .stopped(let line): try line.encode(to: encoder)
        }
    }
}

/// `note`: a sentence for the user (a worker's notes are passed on by its supervisor).
public struct FleetNoteLine: Codable, Sendable, Equatable {
    public var message: String

    public init(message: String) { self.message = message }
}

/// `progress`: start-up so far, about once a second.
public struct FleetProgressLine: Codable, Sendable, Equatable {
    public var online: Int
    public var started: Int
    public var total: Int
    public var seconds: Double

    public init(online: Int, started: Int, total: Int, seconds: Double) {
        self.online = online
        self.started = started
        self.total = total
        self.seconds = seconds
    }
}

/// `online`: the start-up summary, once.
public struct FleetOnlineLine: Codable, Sendable, Equatable {
    public var online: Int
    public var started: Int
    public var planned: Int
    public var seconds: Double
    public var rssBytes: Int
    public var rssBytesBeforeDevices: Int
    public var rssBytesPerDevice: Int
    public var pssBytes: Int
    public var processes: Int
    public var broker: String
    /// The low-power devices' states (PROTOCOL.md 8.4); absent when there are none.
    public var power: FleetPowerCounts?
    /// Set when descriptors ran out: what was needed and the limit.
    public var error: String?
    /// Devices that could not be made (the first few reasons); absent when none.
    public var failures: [String]?

    public init(online: Int, started: Int, planned: Int, seconds: Double, rssBytes: Int, rssBytesBeforeDevices: Int,
                rssBytesPerDevice: Int, pssBytes: Int, processes: Int, broker: String, power: FleetPowerCounts? = nil,
                error: String? = nil, failures: [String]? = nil) {
        self.online = online
        self.started = started
        self.planned = planned
        self.seconds = seconds
        self.rssBytes = rssBytes
        self.rssBytesBeforeDevices = rssBytesBeforeDevices
        self.rssBytesPerDevice = rssBytesPerDevice
        self.pssBytes = pssBytes
        self.processes = processes
        self.broker = broker
        self.power = power
        self.error = error
        self.failures = failures
    }

    private enum CodingKeys: String, CodingKey {
        case online, started, planned, seconds, rssBytes, rssBytesBeforeDevices, rssBytesPerDevice, pssBytes, processes
        case broker, error, failures
        case lowPower
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        online = try c.decode(Int.self, forKey: .online)
        started = try c.decode(Int.self, forKey: .started)
        planned = try c.decode(Int.self, forKey: .planned)
        seconds = try c.decode(Double.self, forKey: .seconds)
        rssBytes = try c.decode(Int.self, forKey: .rssBytes)
        rssBytesBeforeDevices = try c.decode(Int.self, forKey: .rssBytesBeforeDevices)
        rssBytesPerDevice = try c.decode(Int.self, forKey: .rssBytesPerDevice)
        pssBytes = try c.decode(Int.self, forKey: .pssBytes)
        processes = try c.decode(Int.self, forKey: .processes)
        broker = try c.decode(String.self, forKey: .broker)
        error = try c.decodeIfPresent(String.self, forKey: .error)
        failures = try c.decodeIfPresent([String].self, forKey: .failures)
        // The power counts sit flat beside the others (as in a `power` line): all four or none.
        power = c.contains(.lowPower) ? try FleetPowerCounts(from: decoder) : nil
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(online, forKey: .online)
        try c.encode(started, forKey: .started)
        try c.encode(planned, forKey: .planned)
        try c.encode(seconds, forKey: .seconds)
        try c.encode(rssBytes, forKey: .rssBytes)
        try c.encode(rssBytesBeforeDevices, forKey: .rssBytesBeforeDevices)
        try c.encode(rssBytesPerDevice, forKey: .rssBytesPerDevice)
        try c.encode(pssBytes, forKey: .pssBytes)
        try c.encode(processes, forKey: .processes)
        try c.encode(broker, forKey: .broker)
        try c.encodeIfPresent(error, forKey: .error)
        try c.encodeIfPresent(failures, forKey: .failures)
        try power?.encode(to: encoder)
    }
}

/// `stopped`: every device offline, and how long that took.
public struct FleetStoppedLine: Codable, Sendable, Equatable {
    public var devices: Int
    public var seconds: Double

    public init(devices: Int, seconds: Double) {
        self.devices = devices
        self.seconds = seconds
    }
}

/// `power`'s fields (and an `online` line's, when the fleet has low-power devices).
extension FleetPowerCounts: Codable {
    private enum CodingKeys: String, CodingKey { case lowPower, awake, asleep, waking }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(lowPower: try c.decode(Int.self, forKey: .lowPower), awake: try c.decode(Int.self, forKey: .awake),
                  asleep: try c.decode(Int.self, forKey: .asleep), waking: try c.decode(Int.self, forKey: .waking))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(lowPower, forKey: .lowPower)
        try c.encode(awake, forKey: .awake)
        try c.encode(asleep, forKey: .asleep)
        try c.encode(waking, forKey: .waking)
    }
}

/// A line that is not a fleet line, named by what was wrong with it.
public struct FleetLineError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String

    public init(description: String) { self.description = description }
}
