extension CloudJoinMachine {
    /// A message on `d/ai/<uuid>` (PROTOCOL.md 9.2): the token, in pv2.2 under authkey[0..15].
    /// Anything that is not a usable token is logged and the device keeps waiting.
    mutating func receiveTokenMessage(_ bytes: [UInt8], now: Int64, into effects: inout [CloudJoinEffect]) {
        guard phase == .directLink(.waitingForToken) else {
            effects.append(.log(.debug, "pairing message ignored: not waiting for a token"))
            return
        }
        let received: ActivationToken
        do {
            received = try ActivationToken.decode(bytes, authkey: config.licence.authkey)
        } catch {
            switch error {
            case .wrongKey:
                effects.append(.log(.error, "a pairing token arrived in the wrong encryption (it does not open with this authkey): the cloud sealed it for another authkey; check that the authkey belongs to uuid \(config.licence.uuid). Still waiting"))
            case .notPV22(let why):
                effects.append(.log(.warning, "a pairing message that is not pv2.2 was ignored (\(why)). Still waiting"))
            case .notTokenMessage(let number):
                effects.append(.log(.info, "a protocol \(number) message on the pairing topic was ignored. Still waiting"))
            default:
                effects.append(.log(.warning, "a pairing message was unusable: \(error). Still waiting"))
            }
            return
        }
        token = received
        linkOpen = false
        effects.append(.mqttDisconnect)
        if pairingShown {
            pairingShown = false
            effects.append(.hidePairing)
        }
        effects.append(.log(.info, "token received (region \(received.region), env \(received.env))"))
        var next = state
        next.region = received.region
        next.env = received.env
        store(next, into: &effects)
        resolve(.afterToken, now: now, into: &effects)
    }
}
