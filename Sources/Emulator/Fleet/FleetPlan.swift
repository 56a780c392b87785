import DeviceProfile

/// Which devices a fleet holds: template profiles with a count each, indices from `start`
/// (`ipcemu fleet --profile FILE[:COUNT] ... --start K`). Device number `position` (0-based over
/// the groups in order) gets index `start + position`, so the ids of every group stay distinct
/// even when two templates share a prefix.
public struct FleetPlan: Sendable {
    public struct Group: Sendable {
        public var profile: DeviceProfile
        public var count: Int

        public init(profile: DeviceProfile, count: Int) {
            self.profile = profile
            self.count = count
        }
    }

    public let groups: [Group]
    public let start: Int
    /// Devices in the whole plan (every shard together).
    public let total: Int

    public init(groups: [Group], start: Int = 0) throws(FleetError) {
        guard start >= 0 else { throw .invalid("--start must be 0 or more, got \(start)") }
        var total = 0
        for group in groups {
            guard group.count >= 0 else { throw .invalid("a device count must be 0 or more, got \(group.count)") }
            let (sum, overflow) = total.addingReportingOverflow(group.count)
            guard !overflow, sum <= Self.maximumDevices else {
                throw .invalid("a fleet holds at most \(Self.maximumDevices) devices")
            }
            total = sum
        }
        guard total.addingReportingOverflow(start).partialValue <= Self.maximumIndex else {
            throw .invalid("--start \(start) + \(total) devices passes the largest index \(Self.maximumIndex)")
        }
        self.groups = groups
        self.start = start
        self.total = total
    }

    /// At most this many devices in one plan (every host together).
    public static let maximumDevices = 100_000_000
    /// `{index:12}` holds 12 digits.
    public static let maximumIndex = 999_999_999_999

    /// Splits `count` devices over profiles that have no count of their own: explicit counts are
    /// kept, the rest of `total` goes evenly to the others (the first ones get one more).
    public static func counts(explicit: [Int?], total: Int?) throws(FleetError) -> [Int] {
        let fixed = explicit.compactMap { $0 }.reduce(0) { $0 &+ $1 }
        let open = explicit.filter { $0 == nil }.count
        guard let total else {
            guard open == 0 || explicit.count == 1 else {
                throw .invalid("give every --profile a count (FILE:COUNT) or give --count N")
            }
            return explicit.map { $0 ?? 1 }
        }
        guard total >= 0 else { throw .invalid("--count must be 0 or more, got \(total)") }
        if open == 0 {
            guard fixed == total else {
                throw .invalid("the profile counts add up to \(fixed) but --count is \(total)")
            }
            return explicit.map { $0 ?? 0 }
        }
        guard fixed <= total else {
            throw .invalid("the profile counts add up to \(fixed), more than --count \(total)")
        }
        let share = (total - fixed) / open
        var extra = (total - fixed) % open
        return explicit.map { count in
            if let count { return count }
            defer { if extra > 0 { extra -= 1 } }
            return share + (extra > 0 ? 1 : 0)
        }
    }

    /// The group of `position` and the position inside it.
    private func locate(_ position: Int) -> Group? {
        var rest = position
        for group in groups {
            if rest < group.count { return group }
            rest -= group.count
        }
        return nil
    }

    /// The index in `groups` of device number `position` (nil outside the plan).
    public func group(at position: Int) -> Int? {
        guard position >= 0 else { return nil }
        var rest = position
        for (index, group) in groups.enumerated() {
            if rest < group.count { return index }
            rest -= group.count
        }
        return nil
    }

    /// The profile of device number `position` (its template filled in with `start + position`).
    public func profile(at position: Int) throws(FleetError) -> DeviceProfile {
        guard position >= 0, position < total, let group = locate(position) else {
            throw .invalid("no device at position \(position) of \(total)")
        }
        do {
            return try group.profile.instance(index: start + position)
        } catch {
            throw .invalid(error.description)
        }
    }

    /// The device ids at `positions`, in order.
    public func devIds(_ positions: Range<Int>) throws(FleetError) -> [String] {
        var ids: [String] = []
        ids.reserveCapacity(positions.count)
        for position in positions { ids.append(try profile(at: position).identity.devId) }
        return ids
    }
}

/// Block `index` of `count` (`--shard i/N`, 0-based like a Kubernetes completion index): N
/// processes started with the same arguments hold disjoint blocks whose union is the whole plan.
/// Block i is [total*i/N, total*(i+1)/N): sizes differ by at most one.
public struct FleetShard: Sendable, Equatable, CustomStringConvertible {
    public var index: Int
    public var count: Int

    public init(index: Int, count: Int) throws(FleetError) {
        guard count >= 1, count <= 1_000_000 else { throw .invalid("--shard i/N needs N from 1 to 1000000, got \(count)") }
        guard index >= 0, index < count else { throw .invalid("--shard i/N needs i from 0 to N-1, got \(index)/\(count)") }
        self.index = index
        self.count = count
    }

    /// Parses `i/N`.
    public static func parse(_ text: String) throws(FleetError) -> FleetShard {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let i = Int(parts[0]), let n = Int(parts[1]) else {
            throw .invalid("--shard must be i/N (e.g. 0/4), got '\(text)'")
        }
        return try FleetShard(index: i, count: n)
    }

    public static let whole = FleetShard(unchecked: 0, 1)

    private init(unchecked index: Int, _ count: Int) {
        self.index = index
        self.count = count
    }

    /// The positions this shard holds out of `total`.
    public func block(of total: Int) -> Range<Int> {
        Self.block(index, of: count, in: 0..<max(0, total))
    }

    /// Block `index` of `count` equal-as-possible blocks of `range` (overflow-free for any size).
    public static func block(_ index: Int, of count: Int, in range: Range<Int>) -> Range<Int> {
        guard count > 0, index >= 0, index < count else { return range.lowerBound..<range.lowerBound }
        let size = range.count
        let (q, r) = size.quotientAndRemainder(dividingBy: count)
        // total*i/N computed as q*i + r*i/N, which never overflows for sizes below Int.max.
        func edge(_ i: Int) -> Int { q * i + (r * i) / count }
        return (range.lowerBound + edge(index))..<(range.lowerBound + edge(index + 1))
    }

    public var description: String { "\(index)/\(count)" }
}

/// A fleet that cannot be made as asked; the message says what to change.
public enum FleetError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalid(String)
    case descriptors(String)

    public var description: String {
        switch self {
        case .invalid(let text): text
        case .descriptors(let text): text
        }
    }
}
