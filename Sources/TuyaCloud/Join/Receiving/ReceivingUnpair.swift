extension CloudJoinMachine {
    /// `unpair` (`tuya_iot_reset`): tell the cloud when the device link is up
    /// (`tuya.device.reset` over MQTT), close any link, cancel every timer, erase the state file,
    /// and wait for the next `start` **[ours: the SDK pairs again at once]**.
    mutating func receiveUnpair(now: Int64, into effects: inout [CloudJoinEffect]) {
        if phase == .deviceLink(.connected), let devId = state.activation?.devId {
            nextRPCId &+= 1
            if nextRPCId == 0 { nextRPCId = 1 }
            let request = RPCRequest.reset(id: nextRPCId, t: Self.seconds(now))
            effects.append(.mqttPublish(topic: MQTTCredentials.rpcRequestTopic(devId: devId), payload: request.payload, qos: 0))
            effects.append(.left(why: "unpaired"))
        }
        if linkOpen {
            linkOpen = false
            effects.append(.mqttDisconnect)
        }
        if pairingShown {
            pairingShown = false
            effects.append(.hidePairing)
        }
        for timer in CloudJoinTimer.allCases { effects.append(.cancelTimer(timer)) }
        pendingRPC = nil
        token = nil
        phase = .idle
        state = CloudState(uuid: config.licence.uuid)
        effects.append(.eraseState)
        effects.append(.log(.info, "unpaired: the activation is erased; the device pairs again at the next start"))
    }
}
