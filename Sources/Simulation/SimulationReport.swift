/// Faults the run injected, by kind.
public struct FaultCounts: Sendable, Equatable {
    public var lost = 0
    public var duplicated = 0
    public var reordered = 0
    public var delayed = 0
    public var disconnects = 0
    public var partitions = 0
    public var clockJumps = 0
    /// Last wills the broker published (a drop, or a partition longer than the keep-alive).
    public var wills = 0
    /// Deliveries lost because the subscriber was away (clean session) or the sender was.
    public var lostWhileAway = 0
    public var linkFailures = 0
    public var linkBreaks = 0
    public var linkRecoveries = 0

    public var lines: [(String, Int)] {
        [("lost", lost), ("duplicated", duplicated), ("reordered", reordered), ("delayed", delayed),
         ("disconnects", disconnects), ("partitions", partitions), ("clock jumps", clockJumps), ("wills", wills),
         ("lost while away", lostWhileAway), ("link failures", linkFailures), ("link breaks", linkBreaks),
         ("link recoveries", linkRecoveries)]
    }
}

/// What a run did and found.
public struct SimulationReport: Sendable {
    public var config: SimulationConfig
    public var steps = 0
    public var callsStarted = 0
    /// Starts the initiator's engine refused (already in a call): not counted as calls.
    public var startsRefused = 0
    public var callsCompleted = 0
    /// Of those, calls one side ended before another side's ring arrived (counted once above).
    public var splitCalls = 0
    /// Presses in a doorbell's message window: a message left, no call (not in `callsStarted`).
    public var messagesLeft = 0
    public var faultedCalls = 0
    public var pairsChecked = 0
    public var published = 0
    public var delivered = 0
    public var faults = FaultCounts()
    public var hostileMessages = 0
    /// Payloads the glue refused before the engine (bad JSON, bad envelope).
    public var decodeRefusals = 0
    public var engineRefusals = 0
    public var refusalRepliesSent = 0
    public var refusalRepliesDropped = 0
    public var offersRefused = 0
    public var linksOpened = 0
    /// Rings for a session the same side had already ended (a duplicate or late `call` or 43):
    /// not a broken invariant (each ring ends once), but a person sees a call that is over.
    public var ghostRings = 0
    public var simulatedMs: Int64 = 0
    /// Every step's time, kind and node, hashed (FNV-1a): equal for equal runs.
    public var traceHash: UInt64 = 0
    /// True when the queue drained (every call ended); false for a prefix (`maxSteps`) or a stop at
    /// the first violation.
    public var drained = false
    public var violations: [Violation] = []
    public var outcomes: [(String, Int)] = []
}
