import CallEngine

/// One broken rule: when, which rule, what happened.
public struct Violation: Sendable, Equatable, CustomStringConvertible {
    public var step: Int
    public var timeMs: Int64
    public var rule: String
    public var detail: String
    /// The shard of a sharded run it happened in (`--jobs`); nil for a run of one world.
    public var shard: Int? = nil

    public var description: String {
        (shard.map { "shard \($0), " } ?? "") + "step \(step) (t=\(SimTime.format(timeMs))): \(rule): \(detail)"
    }
}

/// The calls in flight, as every side that took part reports them: who opened a session with the
/// id, who has ended it (each exactly once), whether a fault touched it. When the last side ends,
/// the views are checked against PROTOCOL.md and the entry goes.
struct CallLedger {
    struct Entry {
        var kind: CallKind
        var open = 0
        var faulted = false
        var deviceRecord: CallRecord?
        var appRecords: [CallRecord] = []
    }

    private(set) var entries: [String: Entry] = [:]
    /// Calls (distinct session ids) whose every side has ended.
    private(set) var completed = 0
    /// Calls whose sides did not overlap in time: one side ended before another opened the session
    /// (a ring delivered late), so the ledger saw the session open and close more than once.
    private(set) var splitCalls = 0
    /// The session ids (hashed) whose entry has closed once: a call is counted once however many
    /// times its entry reopens.
    private var closedSessions: Set<UInt64> = []
    private(set) var pairsChecked = 0
    private(set) var faultedCalls = 0
    /// Outcome counts of every ended view ("device notAnswered/local", ...).
    private(set) var outcomes: [String: Int] = [:]

    var inFlight: Int { entries.count }

    mutating func open(_ session: String, kind: CallKind) {
        entries[session, default: Entry(kind: kind)].open += 1
    }

    mutating func markFaulted(_ session: String) {
        guard !session.isEmpty, entries[session] != nil else { return }
        entries[session]?.faulted = true
    }

    func isFaulted(_ session: String) -> Bool { entries[session]?.faulted ?? false }

    /// A side ended `record.sessionId`; returns what is wrong, if anything.
    mutating func ended(_ record: CallRecord) -> [(rule: String, detail: String)] {
        var problems: [(String, String)] = []
        let key = "\(record.role.rawValue) \(record.outcome.rawValue)/\(record.endedBy.rawValue)"
        outcomes[key, default: 0] += 1
        switch record.role {
        case .device:
            if let why = OutcomeRules.deviceViewProblem(record) { problems.append(("sdk-error", why)) }
        case .app:
            if let why = OutcomeRules.appViewProblem(record) { problems.append(("sdk-error", why)) }
        }
        guard var entry = entries[record.sessionId], entry.open > 0 else {
            problems.append(("ends-once", "\(record.localId) ended \(record.sessionId) without having it open"))
            return problems
        }
        entry.open -= 1
        switch record.role {
        case .device: entry.deviceRecord = record
        case .app: entry.appRecords.append(record)
        }
        guard entry.open == 0 else {
            entries[record.sessionId] = entry
            return problems
        }
        entries.removeValue(forKey: record.sessionId)
        if closedSessions.insert(StableHash.of(record.sessionId)).inserted {
            completed += 1
        } else {
            splitCalls += 1
        }
        if entry.faulted {
            faultedCalls += 1
        } else if let device = entry.deviceRecord {
            for app in entry.appRecords {
                pairsChecked += 1
                if let why = OutcomeRules.pairProblem(device: device, app: app, kind: entry.kind) {
                    problems.append(("outcome-pair", why))
                }
            }
        }
        return problems
    }
}

/// Simulated time as text: seconds since the start of the run.
enum SimTime {
    static let epochMs: Int64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z

    static func format(_ ms: Int64) -> String {
        let rel = ms - epochMs
        let s = rel / 1000
        let frac = rel % 1000
        let fracText = String(frac)
        return "\(s).\(String(repeating: "0", count: max(0, 3 - fracText.count)))\(fracText)s"
    }
}
