/// A wait helper gave up: what it waited for, for how long, and what it saw meanwhile.
///
/// Its `description` is the failure message a test prints, for example:
/// `device doorbell-1: no "the device rings" within 5 s; state: idle; saw: <- call session=s1 from=user-alice, -> busy session=s1 reason=busy`.
public struct WaitTimeout: Error, Sendable, Equatable, CustomStringConvertible {
    /// Who was waited on: `device DEVID`, `app user USERID`, `fleet`.
    public var subject: String
    /// What was awaited, in words ("the device rings", "phase answered").
    public var awaited: String
    /// The timeout, in seconds.
    public var seconds: Double
    /// The state when the wait gave up (a phase, a frame count), when there is one.
    public var state: String?
    /// The events seen while waiting (at most the last 20), oldest first.
    public var seen: [String]

    public init(subject: String, awaited: String, seconds: Double, state: String? = nil, seen: [String]) {
        self.subject = subject
        self.awaited = awaited
        self.seconds = seconds
        self.state = state
        self.seen = seen
    }

    public var description: String {
        var text = "\(subject): no \"\(awaited)\" within \(Self.format(seconds)) s"
        if let state { text += "; state: \(state)" }
        text += seen.isEmpty ? "; saw nothing" : "; saw: " + seen.joined(separator: ", ")
        return text
    }

    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() && abs(seconds) < 1e9 ? String(Int(seconds)) : String(seconds)
    }
}

extension Duration {
    /// The duration in seconds, for messages.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
