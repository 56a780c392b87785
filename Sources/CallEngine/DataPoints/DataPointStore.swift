import IPCWire

/// A device's data points and their values (PROTOCOL.md 8.3): a typed store, sans-IO. It holds
/// only the DPs the device has (its profile's `dps`), every value of its DP's type (never a silent
/// default), and turns a protocol 5 command into what to report (`applySet`).
///
/// The glue owns one per device: `applySet` for a protocol 5 (then publishes `outcome.report` as
/// protocol 4), `report(ids:)` for a protocol 31, `all` on connect and on waking, `deviceSet` for
/// the device's own changes (a press's DP 136, the battery, awake).
public struct DataPointStore: Sendable, Equatable {
    /// The device's DPs, ascending by id.
    public let definitions: [DPDefinition]
    private var values: [DPId: DPValue]

    /// A store of the catalogue's DPs listed in `ids` (any order, duplicates once), each at its
    /// catalogue default unless `startValues` gives another (`DeviceProfile.dataPointStartValues`).
    /// Throws for an id outside PROTOCOL.md 8.3's table, a start value for a DP not in `ids`, or a
    /// start value that does not fit its DP's type.
    public init(ids: [DPId], startValues: [DPId: DPValue] = [:]) throws(DataPointStoreError) {
        var definitions: [DPDefinition] = []
        for id in Set(ids).sorted() {
            guard let definition = DataPointCatalogue.definition(id) else { throw .notInCatalogue(id) }
            definitions.append(definition)
        }
        var values: [DPId: DPValue] = [:]
        for definition in definitions { values[definition.id] = definition.defaultValue }
        for (id, value) in startValues.sorted(by: { $0.key < $1.key }) {
            guard let definition = definitions.first(where: { $0.id == id }) else { throw .notOnDevice(id) }
            if let problem = definition.type.problem(with: value) {
                throw .invalidValue(id: id, code: definition.code, problem)
            }
            values[id] = value
        }
        self.definitions = definitions
        self.values = values
    }

    /// The device's DP ids, ascending.
    public var ids: [DPId] { definitions.map(\.id) }

    public func has(_ id: DPId) -> Bool { values[id] != nil }

    public func definition(_ id: DPId) -> DPDefinition? { definitions.first { $0.id == id } }

    /// The current value of `id`; nil when the device lacks it.
    public func value(_ id: DPId) -> DPValue? { values[id] }

    /// Every DP with its value, by id (the report on connect and on waking, 8.3 and 8.4).
    public var all: [DPEntry] { definitions.compactMap { d in values[d.id].map { DPEntry(id: d.id, value: $0) } } }

    /// Protocol 31 (8.3): the listed DPs the device has, by id, each once; every DP when `ids` is
    /// empty. Ids the device lacks are left out.
    public func report(ids: [DPId]) -> [DPEntry] {
        guard !ids.isEmpty else { return all }
        return Set(ids).sorted().compactMap { id in values[id].map { DPEntry(id: id, value: $0) } }
    }

    /// The listed DPs the device has with their current values, by id (for the glue's reports of
    /// `PowerEffect.report` and the doorbell's DPs).
    public func entries(_ ids: [DPId]) -> [DPEntry] {
        Set(ids).sorted().compactMap { id in values[id].map { DPEntry(id: id, value: $0) } }
    }

    /// The device changes one of its own DPs (a press's DP 136, the battery, awake; any access).
    /// Returns true when the value changed. Throws, changing nothing, for a DP the device lacks or
    /// a value that does not fit its type.
    @discardableResult
    public mutating func deviceSet(_ id: DPId, _ value: DPValue) throws(DataPointStoreError) -> Bool {
        guard let definition = definition(id) else {
            throw DataPointCatalogue.definition(id) == nil ? .notInCatalogue(id) : .notOnDevice(id)
        }
        if let problem = definition.type.problem(with: value) { throw .invalidValue(id: id, code: definition.code, problem) }
        let changed = values[id] != value
        values[id] = value
        return changed
    }

    /// PROTOCOL.md 8.3, a protocol 5 from `uid`, its `dps` as received (key and raw JSON value):
    /// - "A protocol 5 message sets writable DPs; the device then reports every DP the message set,
    ///   changed or not, plus any DP that changed as a result." (No DP of the table changes another;
    ///   the report is the DPs the message named.)
    /// - "A read-only DP, or a value of the wrong type or out of range, is not applied, and the
    ///   device reports that DP's current value back": a refusal naming the DP and why.
    /// - "an id the device does not have is not applied and not reported": counted in
    ///   `unknownKeys`, as is a key that is not a DP id.
    /// - DP 149: "the app may only set it to true (a wake)": `false` is refused; `true` sets
    ///   `wakeRequested` (the power machine wakes the device).
    /// A key given twice (a glue that did not merge them) is judged each time; the last applied
    /// value stands and the DP is reported once.
    public mutating func applySet(_ dps: [(key: String, value: JSONValue)], from uid: String) -> DPSetOutcome {
        var outcome = DPSetOutcome(uid: uid)
        var named: Set<DPId> = []
        var changed: Set<DPId> = []
        for (key, json) in dps {
            guard let id = DPKey.id(key), let definition = definition(id) else {
                outcome.unknownKeys.append(key)
                continue
            }
            named.insert(id)
            guard let value = DPValue(json: json) else {
                outcome.refusals.append(DPRefusal(
                    id: id, code: definition.code,
                    reason: .invalid(.wrongType(expected: definition.type.expectedKind, got: Self.kindName(json)))))
                continue
            }
            guard definition.access == .readWrite else {
                outcome.refusals.append(DPRefusal(id: id, code: definition.code, reason: .readOnly))
                continue
            }
            if let problem = definition.type.problem(with: value) {
                outcome.refusals.append(DPRefusal(id: id, code: definition.code, reason: .invalid(problem)))
                continue
            }
            if id == DataPointCatalogue.awake {
                guard value == .bool(true) else {
                    outcome.refusals.append(DPRefusal(id: id, code: definition.code, reason: .awakeOnlyTrue))
                    continue
                }
                outcome.wakeRequested = true
            }
            if values[id] != value { changed.insert(id) }
            values[id] = value
            outcome.applied.append(id)
        }
        outcome.changed = changed.sorted()
        outcome.report = named.sorted().compactMap { id in values[id].map { DPEntry(id: id, value: $0) } }
        return outcome
    }

    /// A JSON value's kind, for refusals ("null", "number with a fraction", "array", "object").
    static func kindName(_ json: JSONValue) -> String {
        switch json {
        case .null: "null"
        case .bool: "bool"
        case .int: "integer"
        case .double: "number with a fraction"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

/// What a protocol 5 did (PROTOCOL.md 8.3), for the glue: publish `report` as protocol 4, log and
/// count `refusals` and `unknownKeys`, wake on `wakeRequested`.
public struct DPSetOutcome: Sendable, Equatable {
    /// The user who sent the command.
    public var uid: String
    /// The DPs to report with their values now: every DP the message named that the device has
    /// (applied or refused), ascending by id. Empty: send nothing.
    public var report: [DPEntry] = []
    /// DPs written, in message order (a value equal to the old one counts as written).
    public var applied: [DPId] = []
    /// DPs whose value changed, ascending.
    public var changed: [DPId] = []
    /// DPs not applied, in message order, each with why.
    public var refusals: [DPRefusal] = []
    /// Keys naming no DP of this device (not DP ids, or ids it lacks), in message order: not
    /// applied, not reported, counted.
    public var unknownKeys: [String] = []
    /// DP 149 set to true: the device should wake (8.4).
    public var wakeRequested = false

    public init(uid: String) { self.uid = uid }
}

/// A DP a protocol 5 named but that was not applied (PROTOCOL.md 8.3).
public struct DPRefusal: Sendable, Equatable, Hashable, CustomStringConvertible {
    public enum Reason: Sendable, Equatable, Hashable, CustomStringConvertible {
        /// Only the device changes it.
        case readOnly
        /// DP 149 set to false: the app may only wake the device.
        case awakeOnlyTrue
        /// The value does not fit the DP's type.
        case invalid(DPValueProblem)

        public var description: String {
            switch self {
            case .readOnly: "is read-only"
            case .awakeOnlyTrue: "may only be set to true (a wake)"
            case .invalid(let problem): "refused: \(problem)"
            }
        }
    }

    public var id: DPId
    public var code: String
    public var reason: Reason

    public init(id: DPId, code: String, reason: Reason) {
        self.id = id
        self.code = code
        self.reason = reason
    }

    /// `DP 136 doorbell_active is read-only`
    public var description: String { "DP \(id) \(code) \(reason)" }
}

/// A device-side use of the store that makes no sense (a programming or profile mistake, never
/// wire input): the store is unchanged.
public enum DataPointStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not a DP of PROTOCOL.md 8.3's table.
    case notInCatalogue(DPId)
    /// A DP of the table this device does not have (its profile's `dps`).
    case notOnDevice(DPId)
    /// A value that does not fit the DP's type.
    case invalidValue(id: DPId, code: String, DPValueProblem)

    public var description: String {
        switch self {
        case .notInCatalogue(let id): "DP \(id) is not a DP of PROTOCOL.md 8.3"
        case .notOnDevice(let id): "this device has no DP \(id)"
        case .invalidValue(let id, let code, let problem): "DP \(id) \(code): \(problem)"
        }
    }
}
