import HeapModule

/// A binary min-heap of (deadline, client) pairs: one per loop thread for every client's timer
/// (DESIGN.md "Scale": one timer structure per loop, no per-wakeup scan over all clients).
///
/// Removal is lazy: when a client's deadline changes, a new entry is pushed and the old one stays
/// until it reaches the top, where its owner sees that it no longer matches and skips it.
struct DeadlineHeap {
    struct Entry: Comparable {
        var deadline: Double
        var id: ObjectIdentifier

        static func < (a: Entry, b: Entry) -> Bool { a.deadline < b.deadline }
    }

    private var entries = Heap<Entry>()

    var count: Int { entries.count }
    var earliest: Double? { entries.min?.deadline }

    mutating func push(_ deadline: Double, id: ObjectIdentifier) {
        entries.insert(Entry(deadline: deadline, id: id))
    }

    /// The earliest entry if it is due at `now`, removed from the heap.
    mutating func popDue(now: Double) -> Entry? {
        guard let top = entries.min, top.deadline <= now else { return nil }
        return entries.popMin()
    }

    mutating func removeAll() { entries = Heap() }
}
