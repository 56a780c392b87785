/// Where one client's connection is, and what the client wants of it: the one state the connection
/// keeps (guarded by its mutex) instead of a set of flags. docs/mqtt.md.
///
///     idle --connect()--> reconnectWait --attempt--> connecting --CONNACK--> connected
///       ^                   ^    |                     |   \                      |
///       |                   |    +--no socket----------+    \--disconnect()--> stopping
///       +--socket closed----|--------------------------------------------------------+
///                           +--socket closed (a connection is still wanted)----------+
///
/// `connect()` while `stopping` goes back to `connecting`/`connected`: the socket is still closed
/// as asked, then the client reconnects. The public `MQTTConnectionState` is what the owner sees;
/// this is how the connection gets there.
enum ConnectionLifecycle: Sendable {
    /// No connection wanted and no socket: before `connect()`, after a disconnect.
    case idle
    /// A connection is wanted and there is no socket: the next attempt is posted (after
    /// `connect()`) or due when the retry timer fires. `failures`: attempts failed in a row, for
    /// the back-off.
    case reconnectWait(failures: Int)
    /// A connection is wanted; the socket is open and the broker has not answered (no CONNACK).
    case connecting(ConnectionAttempt)
    /// A connection is wanted and the broker accepted it.
    case connected(ConnectionAttempt)
    /// The socket is still open but no connection is wanted (`disconnect()`): it is being closed.
    case stopping(ConnectionAttempt)
    /// The libmosquitto handle is freed; nothing more happens.
    case closed

    /// True while the client wants a connection (`connect()` and no disconnect since).
    var wantsConnection: Bool {
        switch self {
        case .reconnectWait, .connecting, .connected: true
        case .idle, .stopping, .closed: false
        }
    }

    /// The socket's attempt, while a socket is open.
    var attempt: ConnectionAttempt? {
        switch self {
        case .connecting(let a), .connected(let a), .stopping(let a): a
        case .idle, .reconnectWait, .closed: nil
        }
    }

    /// The open socket's timer (`ConnectionAttempt.deadline`), while a socket is open.
    var socketDeadline: Double? {
        switch self {
        case .connecting(let a), .connected(let a), .stopping(let a): a.deadline
        case .idle, .reconnectWait, .closed: nil
        }
    }

    /// Attempts failed in a row (0 once connected).
    var failures: Int {
        switch self {
        case .reconnectWait(let failures): failures
        case .connecting(let a), .connected(let a), .stopping(let a): a.failures
        case .idle, .closed: 0
        }
    }

    /// Changes the open socket's attempt (nothing without one).
    mutating func updateAttempt(_ change: (inout ConnectionAttempt) -> Void) {
        switch self {
        case .connecting(var a): change(&a); self = .connecting(a)
        case .connected(var a): change(&a); self = .connected(a)
        case .stopping(var a): change(&a); self = .stopping(a)
        case .idle, .reconnectWait, .closed: break
        }
    }

    /// `connect()`: a connection is wanted from now on (the back-off starts over). False when one
    /// already was, or the client is closed.
    mutating func want() -> Bool {
        switch self {
        case .idle:
            self = .reconnectWait(failures: 0)
        case .stopping(var a):
            a.failures = 0
            self = a.acknowledged ? .connected(a) : .connecting(a)
        case .reconnectWait, .connecting, .connected, .closed:
            return false
        }
        return true
    }

    /// `disconnect()`: no connection is wanted from now on (an open socket is then closed).
    mutating func unwant() {
        switch self {
        case .reconnectWait: self = .idle
        case .connecting(let a), .connected(let a): self = .stopping(a)
        case .idle, .stopping, .closed: break
        }
    }
}

/// One socket's attempt, from `mosquitto_connect` to the disconnect callback.
struct ConnectionAttempt: Sendable {
    /// The socket's own timer, in monotonic seconds (nil: none): before the CONNACK the attempt's
    /// timeout, after it the next keepalive check (ClientConnection+SocketTimer.swift). It is one of
    /// the client's deadlines in its loop's heap, so no pass over every client is needed.
    var deadline: Double?
    /// Attempts failed in a row before this one (0 once the broker accepts).
    var failures: Int
    /// The broker accepted (CONNACK 0) on this socket.
    var acknowledged = false
    /// The broker refused the connection (CONNACK with an error): why.
    var refusal: String?
    /// The client closes this socket itself (disconnect, drop, CONNACK timeout): the reason the
    /// close reports, over whatever libmosquitto says.
    var closingReason: String?

    /// `deadline`: when the CONNACK is due.
    init(deadline: Double, failures: Int) {
        self.deadline = deadline
        self.failures = failures
    }
}
