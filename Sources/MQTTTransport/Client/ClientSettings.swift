import Synchronization

/// What the clients of one broker and configuration share (docs/fleet.md "Memory per device"):
/// every option but a client's identity, held once by reference. A fleet's devices ask for equal
/// settings (same broker, keep alive, will payload ...), so 10,000 clients hold one of these
/// instead of 10,000 copies of `MQTTClientOptions` (256 bytes each, inline).
///
/// `shared(for:)` hands out one object for equal settings from a bounded table (a miss only
/// costs the sharing, never correctness): when it is full it starts over.
final class ClientSettings: Sendable {
    /// The options with the identity taken out: `clientID` empty, no username or password, and
    /// the will (if any) with an empty topic.
    let options: MQTTClientOptions

    private init(options: MQTTClientOptions) { self.options = options }

    /// The shared object for `common` (options already split: see `MQTTClientOptions.split`).
    static func shared(for common: MQTTClientOptions) -> ClientSettings {
        table.withLock { table in
            if let found = table[common] { return found }
            if table.count >= tableLimit { table.removeAll() }
            let made = ClientSettings(options: common)
            table[common] = made
            return made
        }
    }

    /// Distinct settings kept for sharing (a fleet has one per broker URL and source address).
    static let tableLimit = 256
    private static let table = Mutex<[MQTTClientOptions: ClientSettings]>([:])
}

/// A client's own part of its options (what differs from device to device in a fleet).
struct ClientIdentity: Sendable {
    var clientID: String
    var username: String?
    var password: String?
    /// The last will's topic (the will's payload, QoS and retain flag are in the settings).
    var willTopic: String?
}

extension MQTTClientOptions {
    /// The part clients share and the client's own; `init(settings:identity:)` puts them back.
    func split() -> (common: MQTTClientOptions, identity: ClientIdentity) {
        var common = self
        common.clientID = ""
        common.username = nil
        common.password = nil
        common.will?.topic = ""
        let identity = ClientIdentity(clientID: clientID, username: username, password: password, willTopic: will?.topic)
        return (common, identity)
    }

    /// The options `split()` took apart.
    init(settings: ClientSettings, identity: ClientIdentity) {
        self = settings.options
        clientID = identity.clientID
        username = identity.username
        password = identity.password
        if let willTopic = identity.willTopic { will?.topic = willTopic }
    }
}
