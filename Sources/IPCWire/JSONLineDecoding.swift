import Foundation

/// Reads one JSON line of a Codable type and, when it is not one, says what was wrong in words
/// naming the field (`field 'online' is missing`, `field 'seconds' is not a number`, `field 'event'
/// is none of note, progress, ...`), never a 0 read from a missing field. Shared by the lines
/// processes exchange on stdout (`FleetLine`, `CloudFleetLine`), which it also writes.
public enum JSONLineDecoding {
    /// `value` as one line: compact JSON, keys sorted, no newline. A value that cannot be encoded
    /// (a number that is not finite) becomes `{"event":"<event>"}`, never a crash.
    public static func encode(_ value: some Encodable, event: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return #"{"event":"\#(event)"}"# }
        return String(decoding: data, as: UTF8.self)
    }

    /// Decodes `bytes` as `T`; throws the description of what was wrong. `events`: the names a
    /// field `event` may hold (named when it holds another).
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: some Sequence<UInt8>,
                                            events: [String], lineKind: String) throws(JSONLineProblem) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(bytes))
        } catch let error as DecodingError {
            throw JSONLineProblem(error, events: events, lineKind: lineKind)
        } catch {
            throw JSONLineProblem(description: "not a \(lineKind): \(error)")
        }
    }
}

/// What was wrong with a JSON line, in words naming the field.
public struct JSONLineProblem: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String

    public init(description: String) { self.description = description }

    public init(_ error: DecodingError, events: [String], lineKind: String) {
        func path(_ keys: [any CodingKey], _ last: (any CodingKey)? = nil) -> String {
            let all = keys + (last.map { [$0] } ?? [])
            return all.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            description = "field '\(path(context.codingPath, key))' is missing"
        case .valueNotFound(_, let context):
            description = "field '\(path(context.codingPath))' is null"
        case .typeMismatch(let type, let context):
            description = "field '\(path(context.codingPath))' is not \(Self.name(of: type))"
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                description = "not JSON: \(context.debugDescription)"
            } else if context.codingPath.last?.stringValue == "event", !events.isEmpty {
                description = "field 'event' is none of \(events.joined(separator: ", "))"
            } else {
                description = "field '\(path(context.codingPath))': \(context.debugDescription)"
            }
        @unknown default:
            description = "not a \(lineKind): \(error)"
        }
    }

    private static func name(of type: Any.Type) -> String {
        switch type {
        case is Int.Type: "an integer"
        case is Double.Type: "a number"
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is [String].Type: "a list of strings"
        default: "a \(type)"
        }
    }
}
