extension CloudJoinMachine {
    /// A timer is due.
    mutating func receiveTimer(_ timer: CloudJoinTimer, now: Int64, into effects: inout [CloudJoinEffect]) {
        switch timer {
        case .retry:
            guard case .backoff(_, let step) = phase else {
                effects.append(.log(.debug, "retry timer ignored: nothing to retry"))
                return
            }
            switch step {
            case .resolve(let purpose): resolve(purpose, now: now, into: &effects)
            case .directLink: connectDirectLink(now: now, into: &effects)
            case .activate: activate(now: now, into: &effects)
            case .deviceLink: connectDeviceLink(now: now, into: &effects)
            }
        case .upgradeCheck:
            guard phase == .deviceLink(.connected), let devId = state.activation?.devId else { return }
            nextRPCId &+= 1
            if nextRPCId == 0 { nextRPCId = 1 }
            let request = RPCRequest.upgradeCheck(id: nextRPCId, t: Self.seconds(now))
            pendingRPC = request.id
            effects.append(.mqttPublish(topic: MQTTCredentials.rpcRequestTopic(devId: devId), payload: request.payload, qos: 0))
            effects.append(.armTimer(.rpcTimeout, at: now.addingReportingOverflow(RPCRequest.defaultTimeoutMs).partialValue))
            effects.append(.armTimer(.upgradeCheck, at: now.addingReportingOverflow(Self.upgradeCheckPeriodMs).partialValue))
        case .rpcTimeout:
            guard let id = pendingRPC else { return }
            pendingRPC = nil
            effects.append(.log(.warning, "the upgrade check (rpc id \(id)) had no answer in 8 s; the next is in 24 h"))
        }
    }

    /// A message on `rpc/rsp/<devId>`: the upgrade check's answer.
    mutating func receiveRPCAnswer(_ bytes: [UInt8], now: Int64, into effects: inout [CloudJoinEffect]) {
        let answer: RPCAnswer
        do {
            answer = try RPCAnswer.decode(bytes)
        } catch {
            effects.append(.log(.warning, "an API answer over MQTT was unusable: \(error)"))
            return
        }
        guard let pending = pendingRPC, answer.id == pending else {
            effects.append(.log(.debug, "API answer \(answer.id) ignored: no call with that id is waiting"))
            return
        }
        pendingRPC = nil
        effects.append(.cancelTimer(.rpcTimeout))
        if !answer.success {
            effects.append(.log(.warning, "the upgrade check was refused by the cloud"))
        } else if answer.offersNoUpgrade {
            effects.append(.log(.info, "upgrade check: no firmware offered"))
        } else {
            effects.append(.log(.info, "upgrade check: the cloud offers firmware \(answer.result?.jsonString ?? ""); ipcemu does not upgrade"))
        }
    }
}
