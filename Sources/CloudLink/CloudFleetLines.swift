import Foundation
import IPCWire

// What `ipcemu fleet --cloud tuya --json` prints, one JSON object per line (docs/tuya-cloud.md,
// "Fleets on the cloud"), and what a cloud fleet's supervisor reads back from each of its workers
// (`ipcemu fleet --cloud tuya --block LO:HI --json`). One set of Codable types for both ends.

/// One line of a cloud fleet: its `event` and that event's fields, flat in one object.
public enum CloudFleetLine: Sendable, Equatable {
    /// A sentence for the user.
    case note(message: String)
    /// The counts by state, whenever they change (at most five a second).
    case cloud(CloudFleetCounts, seconds: Double)
    /// A device waits for the app's scan of this URL.
    case pairing(uuid: String, url: String)
    /// A paced join request let through (`request`: resolveEndpoints or activate).
    case paced(uuid: String, request: String, seconds: Double)
    /// A device's step was refused (its error log line).
    case refused(uuid: String, reason: String)
    /// Every device is joined, once.
    case online(online: Int, planned: Int, seconds: Double, activationsPerSecond: Double)
    /// At shutdown: the counts, and the paced requests let through.
    case summary(CloudFleetCounts, pacedRequests: Int)
    /// Every device offline.
    case stopped(devices: Int, seconds: Double)

    public enum Event: String, Codable, Sendable, CaseIterable {
        case note, cloud, pairing, paced, refused, online, summary, stopped
    }

    public var event: Event {
        switch self {
        case .note: .note
        case .cloud: .cloud
        case .pairing: .pairing
        case .paced: .paced
        case .refused: .refused
        case .online: .online
        case .summary: .summary
        case .stopped: .stopped
        }
    }

    /// The line as printed: compact JSON, keys sorted, no newline.
    public var jsonText: String {
        // Strings, integers and finite numbers only (the seconds and rates are finite).
        JSONLineDecoding.encode(self, event: event.rawValue)
    }

    /// Reads one line; a line that is not one of these throws `CloudFleetLineError` naming the field.
    public init(jsonLine: some Sequence<UInt8>) throws(CloudFleetLineError) {
        do throws(JSONLineProblem) {
            self = try JSONLineDecoding.decode(CloudFleetLine.self, from: jsonLine, events: Event.allCases.map(\.rawValue),
                                               lineKind: "cloud fleet line")
        } catch {
            throw CloudFleetLineError(description: error.description)
        }
    }
}

/// A line that is not a cloud fleet line, named by what was wrong with it.
public struct CloudFleetLineError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
}

extension CloudFleetLine: Codable {
    private enum Key: String, CodingKey {
        case event, message, seconds, uuid, url, request, reason, online, planned, cloud, activationsPerSecond, pacedRequests, devices
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        switch try c.decode(Event.self, forKey: .event) {
        case .note:
            self = .note(message: try c.decode(String.self, forKey: .message))
        case .cloud:
            self = .cloud(try CloudFleetCounts(from: decoder), seconds: try c.decode(Double.self, forKey: .seconds))
        case .pairing:
            self = .pairing(uuid: try c.decode(String.self, forKey: .uuid), url: try c.decode(String.self, forKey: .url))
        case .paced:
            self = .paced(uuid: try c.decode(String.self, forKey: .uuid), request: try c.decode(String.self, forKey: .request),
                          seconds: try c.decode(Double.self, forKey: .seconds))
        case .refused:
            self = .refused(uuid: try c.decode(String.self, forKey: .uuid), reason: try c.decode(String.self, forKey: .reason))
        case .online:
            self = .online(online: try c.decode(Int.self, forKey: .online), planned: try c.decode(Int.self, forKey: .planned),
                           seconds: try c.decode(Double.self, forKey: .seconds),
                           activationsPerSecond: try c.decode(Double.self, forKey: .activationsPerSecond))
        case .summary:
            self = .summary(try CloudFleetCounts(from: decoder), pacedRequests: try c.decode(Int.self, forKey: .pacedRequests))
        case .stopped:
            self = .stopped(devices: try c.decode(Int.self, forKey: .devices), seconds: try c.decode(Double.self, forKey: .seconds))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(event, forKey: .event)
        switch self {
        case .note(let message):
            try c.encode(message, forKey: .message)
        case .cloud(let counts, let seconds):
            try counts.encode(to: encoder)
            try c.encode(seconds, forKey: .seconds)
        case .pairing(let uuid, let url):
            try c.encode(uuid, forKey: .uuid)
            try c.encode(url, forKey: .url)
        case .paced(let uuid, let request, let seconds):
            try c.encode(uuid, forKey: .uuid)
            try c.encode(request, forKey: .request)
            try c.encode(seconds, forKey: .seconds)
        case .refused(let uuid, let reason):
            try c.encode(uuid, forKey: .uuid)
            try c.encode(reason, forKey: .reason)
        case .online(let online, let planned, let seconds, let perSecond):
            try c.encode(online, forKey: .online)
            try c.encode(planned, forKey: .planned)
            try c.encode(seconds, forKey: .seconds)
            try c.encode("tuya", forKey: .cloud)
            try c.encode(perSecond, forKey: .activationsPerSecond)
        case .summary(let counts, let paced):
            try counts.encode(to: encoder)
            try c.encode(paced, forKey: .pacedRequests)
        case .stopped(let devices, let seconds):
            try c.encode(devices, forKey: .devices)
            try c.encode(seconds, forKey: .seconds)
        }
    }
}

extension CloudFleetCounts {
    /// Adds another process's counts (a worker's).
    public static func + (a: CloudFleetCounts, b: CloudFleetCounts) -> CloudFleetCounts {
        var sum = a
        sum.total += b.total
        sum.joining += b.joining
        sum.waitingForToken += b.waitingForToken
        sum.paired += b.paired
        sum.joined += b.joined
        sum.refused += b.refused
        return sum
    }
}
