/// The filters a client restores on every reconnect, in the order first subscribed. The first is
/// kept inline (a fleet device has one: its in topic), the others in an array made only for them
/// (docs/fleet.md "Memory per device": no array per device).
struct SubscriptionList {
    struct Entry {
        var filter: String
        var qos: Int32
    }

    private var first: Entry?
    private var others: [Entry] = []

    /// Every entry, in order (made on each read: on reconnect and when listed).
    var entries: [Entry] {
        guard let first else { return others }
        return [first] + others
    }

    /// Each entry in order, without making an array (every reconnect resubscribes).
    func forEach(_ body: (Entry) -> Void) {
        if let first { body(first) }
        for entry in others { body(entry) }
    }

    /// The QoS `filter` is remembered with, if it is.
    func qos(of filter: String) -> Int32? {
        if let first, first.filter == filter { return first.qos }
        return others.first { $0.filter == filter }?.qos
    }

    /// Remembers `filter` at `qos` (a filter already there keeps its place).
    mutating func set(_ filter: String, qos: Int32) {
        if first?.filter == filter {
            first?.qos = qos
        } else if let index = others.firstIndex(where: { $0.filter == filter }) {
            others[index].qos = qos
        } else if first == nil, others.isEmpty {
            first = Entry(filter: filter, qos: qos)
        } else {
            others.append(Entry(filter: filter, qos: qos))
        }
    }

    mutating func remove(_ filter: String) {
        if first?.filter == filter {
            first = others.isEmpty ? nil : others.removeFirst()
            if others.isEmpty { others = [] }   // no storage kept for none
        } else {
            others.removeAll { $0.filter == filter }
        }
    }
}
