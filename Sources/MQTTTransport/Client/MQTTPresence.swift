/// What a client publishes for its owner as soon as each connection is subscribed
/// (`MQTTClient.setPresence`): a device's retained meta and online status (PROTOCOL.md 1, 5).
///
/// The client's loop thread publishes the messages at the SUBACK of the last subscription it
/// restored after the CONNACK, in order, and only then hands its owner the `.connected` state: so
/// whoever sees the presence finds the owner subscribed, and a reconnect needs no hop to the
/// owner's task or actor for it (docs/fleet.md "100,000 devices on one host": a reconnect storm's
/// CPU per reconnect). `messages` runs on the loop thread with the client's lock held: it must be
/// quick and must not call the client.
public struct MQTTPresence: Sendable {
    let messages: @Sendable () -> [MQTTMessage]

    public init(_ messages: @escaping @Sendable () -> [MQTTMessage]) {
        self.messages = messages
    }
}
