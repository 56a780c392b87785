/// The last few sessions a role has ended, so that a `call` or a 43 for one of them, arriving
/// again after its end (MQTT QoS 1 redelivers; a broker may hold a message back), does not ring a
/// call that is over. PROTOCOL.md 3.1.2 covers a repeated `call` for the session a side still has;
/// for one it has ended, the message is dropped and counted, with no reply and no ring **[ours]**
/// (found by the simulator: docs/simulation.md, "ghost rings").
///
/// Session ids are chosen by the caller and never reused (PROTOCOL.md 3), so remembering the
/// newest `capacity` of them is enough; each is kept as a 64-bit FNV-1a hash (no copy of the id),
/// and a role that never ended a call holds no storage at all (fleets keep 10,000s of engines).
struct EndedSessions: Sendable, Equatable {
    static let capacity = 8
    private var hashes: [UInt64] = []
    private var next = 0

    /// Remembers `sessionId` as ended (the oldest is forgotten once `capacity` are kept).
    mutating func note(_ sessionId: String) {
        let hash = Self.hash(sessionId)
        if hashes.contains(hash) { return }
        if hashes.count < Self.capacity {
            hashes.append(hash)
        } else {
            hashes[next] = hash
            next = (next + 1) % Self.capacity
        }
    }

    func contains(_ sessionId: String) -> Bool {
        hashes.isEmpty ? false : hashes.contains(Self.hash(sessionId))
    }

    private static func hash(_ text: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            h ^= UInt64(byte)
            h = h &* 0x0000_0100_0000_01b3
        }
        return h
    }
}
