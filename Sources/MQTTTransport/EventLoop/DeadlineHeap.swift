/// A binary min-heap of (deadline, client) pairs: one per loop thread for every client's timer
/// (DESIGN.md "Scale": one timer structure per loop, no per-wakeup scan over all clients).
///
/// Removal is lazy: when a client's deadline changes, a new entry is pushed and the old one stays
/// until it reaches the top, where its owner sees that it no longer matches and skips it.
struct DeadlineHeap {
    struct Entry {
        var deadline: Double
        var id: ObjectIdentifier
    }

    private var entries: [Entry] = []

    var count: Int { entries.count }
    var earliest: Double? { entries.first?.deadline }

    mutating func push(_ deadline: Double, id: ObjectIdentifier) {
        entries.append(Entry(deadline: deadline, id: id))
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].deadline < entries[parent].deadline else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// The earliest entry if it is due at `now`, removed from the heap.
    mutating func popDue(now: Double) -> Entry? {
        guard let top = entries.first, top.deadline <= now else { return nil }
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var smallest = parent
                if left < entries.count, entries[left].deadline < entries[smallest].deadline { smallest = left }
                if right < entries.count, entries[right].deadline < entries[smallest].deadline { smallest = right }
                guard smallest != parent else { break }
                entries.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return top
    }

    mutating func removeAll() { entries.removeAll() }
}
