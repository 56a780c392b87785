import CallEngine
import IPCWire

/// A node of the simulated system.
enum NodeRef: Hashable, Sendable, CustomStringConvertible {
    case device(Int)
    case user(Int)
    /// A hostile sender (floods; never subscribes).
    case hostile(Int)

    var description: String {
        switch self {
        case .device(let i): "d\(i)"
        case .user(let i): "u\(i)"
        case .hostile(let i): "evil\(i)"
        }
    }
}

/// Which engine of a node: a device has one (`DeviceSideEngine`); an app user has the §3 engine
/// and the doorbell engine.
enum EngineSlot: UInt8, Sendable {
    case call
    case doorbell
}

/// What a simulated person does, some time after their phone or bell started ringing.
enum HumanAction: String, Sendable {
    case answer, reject, busy, cancel, hangUp
}

/// One MQTT publish as it crosses the broker: the encoded bytes (the real codec), decoded once at
/// the first delivery (every subscriber decodes the same bytes to the same message).
final class SimPacket {
    let bytes: [UInt8]
    let from: NodeRef
    /// The call it belongs to ("" for none): faults on it mark the call as faulted.
    let session: String
    let hostile: Bool
    private(set) var decoded: Result<InboundMessage, WireError>?

    init(bytes: [UInt8], from: NodeRef, session: String, hostile: Bool = false) {
        self.bytes = bytes
        self.from = from
        self.session = session
        self.hostile = hostile
    }

    func message() -> Result<InboundMessage, WireError> {
        if let decoded { return decoded }
        let result: Result<InboundMessage, WireError>
        do throws(WireError) {
            result = .success(try InboundMessage.decode(payload: bytes).message)
        } catch {
            result = .failure(error)
        }
        decoded = result
        return result
    }
}

enum FaultEvent: Sendable {
    case disconnect(NodeRef)
    case reconnect(NodeRef, epoch: Int)
    case partitionStart
    case partitionEnd(id: Int)
    case clockJump(NodeRef)
    case clockHeal(NodeRef)
}

enum SimEvent {
    /// A publish reaches one subscriber.
    case deliver(SimPacket, to: NodeRef, epoch: Int)
    /// A timer an engine armed is due (`token` tells a re-armed or cancelled one).
    case timer(NodeRef, EngineSlot, CallTimer, token: UInt64)
    /// The workload starts its next call.
    case startCall
    case human(NodeRef, EngineSlot, HumanAction, session: String)
    /// The P2P link of a device's session connects, breaks, or comes back (`generation` tells a
    /// closed or replaced link).
    case linkUp(device: Int, session: String, generation: UInt64)
    case linkDown(device: Int, session: String, generation: UInt64)
    case fault(FaultEvent)
    /// A hostile sender's next burst.
    case hostile(Int)

    var kindName: String {
        switch self {
        case .deliver: "deliver"
        case .timer: "timer"
        case .startCall: "startCall"
        case .human: "human"
        case .linkUp: "linkUp"
        case .linkDown: "linkDown"
        case .fault: "fault"
        case .hostile: "hostile"
        }
    }

    var kindCode: Int64 {
        switch self {
        case .deliver: 1
        case .timer: 2
        case .startCall: 3
        case .human: 4
        case .linkUp: 5
        case .linkDown: 6
        case .fault: 7
        case .hostile: 8
        }
    }
}

/// The discrete-event queue: a binary min-heap on (time, insertion order), so events at the same
/// simulated millisecond run in the order they were scheduled (deterministic).
struct EventQueue {
    private struct Entry {
        var time: Int64
        var seq: UInt64
        var event: SimEvent

        @inline(__always)
        static func before(_ a: Entry, _ b: Entry) -> Bool { a.time < b.time || (a.time == b.time && a.seq < b.seq) }
    }

    private var heap: [Entry] = []
    private var nextSeq: UInt64 = 0

    var count: Int { heap.count }
    var isEmpty: Bool { heap.isEmpty }

    mutating func push(_ event: SimEvent, at time: Int64) {
        heap.append(Entry(time: time, seq: nextSeq, event: event))
        nextSeq &+= 1
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard Entry.before(heap[i], heap[parent]) else { break }
            heap.swapAt(i, parent)
            i = parent
        }
    }

    mutating func pop() -> (time: Int64, event: SimEvent)? {
        guard !heap.isEmpty else { return nil }
        let top = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var i = 0
            let n = heap.count
            while true {
                let l = 2 * i + 1
                let r = l + 1
                var m = i
                if l < n, Entry.before(heap[l], heap[m]) { m = l }
                if r < n, Entry.before(heap[r], heap[m]) { m = r }
                if m == i { break }
                heap.swapAt(i, m)
                i = m
            }
        }
        return (top.time, top.event)
    }
}
