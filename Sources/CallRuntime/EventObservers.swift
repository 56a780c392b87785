/// The observers of a device or an app user: each `events()` call gets its own ordered stream of
/// everything from then on; all of them finish when the owner stops. Lives inside the owner's
/// actor (written once for `Device` and `AppUser`).
public struct EventObservers<Event: Sendable>: Sendable {
    private var continuations: [UInt64: AsyncStream<Event>.Continuation] = [:]
    private var nextId: UInt64 = 0

    public init() {}

    /// A new stream. When its consumer stops listening, `ended` is called with its id (from any
    /// thread): hop onto the owner's actor there and call `remove`.
    public mutating func add(ended: @escaping @Sendable (UInt64) -> Void) -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .unbounded)
        let id = nextId
        nextId &+= 1
        continuations[id] = continuation
        continuation.onTermination = { _ in ended(id) }
        return stream
    }

    public mutating func remove(_ id: UInt64) { continuations.removeValue(forKey: id) }

    public func emit(_ event: Event) {
        for continuation in continuations.values { continuation.yield(event) }
    }

    /// Ends every stream (the owner stopped).
    public mutating func finishAll() {
        let ending = continuations
        continuations.removeAll()
        for continuation in ending.values { continuation.finish() }
    }

    public var count: Int { continuations.count }
}
