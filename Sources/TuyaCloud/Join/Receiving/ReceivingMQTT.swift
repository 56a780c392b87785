extension CloudJoinMachine {
    enum LinkTrouble {
        case connack(UInt8)
        case connectFailed(String)
        case disconnected(String)
    }

    /// The link asked for is up.
    mutating func receiveMQTTConnected(now: Int64, into effects: inout [CloudJoinEffect]) {
        switch phase {
        case .directLink(.connecting):
            mqttJitterMax = Self.mqttBackoffMinMs
            phase = .directLink(.waitingForToken)
            effects.append(.log(.info, "direct link up as acon_\(config.licence.uuid): waiting for the app to scan the QR code"))
        case .deviceLink(.connecting):
            guard let activation = state.activation, let endpoints = state.endpoints else { return }
            mqttJitterMax = Self.mqttBackoffMinMs
            phase = .deviceLink(.connected)
            effects.append(.joined(CloudDeviceIdentity(activation: activation, endpoints: endpoints)))
            effects.append(.log(.info, "device link up as \(activation.devId) at \(endpoints.mqttHost):\(endpoints.mqttPort)"))
            effects.append(.armTimer(.upgradeCheck, at: now.addingReportingOverflow(Self.upgradeCheckFirstMs).partialValue))
        default:
            effects.append(.log(.debug, "MQTT connected ignored: no link was being connected"))
        }
    }

    /// The link was refused, could not be made, or went down.
    mutating func receiveMQTTRefusal(_ trouble: LinkTrouble, now: Int64, into effects: inout [CloudJoinEffect]) {
        switch phase {
        case .directLink(let linkPhase):
            linkOpen = false
            // mqtt_bind.c: a failed connect sleeps 2 s (after tuya_mqtt_start's own backoff, except
            // for CONNACK 5, which has no backoff there).
            var delay = Self.directLinkRetryMs
            if case .connack(5) = trouble {} else { delay += nextMQTTDelay() }
            effects.append(.log(linkPhase == .waitingForToken ? .warning : .error,
                                "direct link: \(describe(trouble, link: .direct)); retrying in \(Self.describe(delay))"))
            backoff(.directLink, delay: delay, now: now, into: &effects)
        case .deviceLink(let linkPhase):
            linkOpen = false
            if case .connack(5) = trouble {
                unbind(now: now, into: &effects)
                return
            }
            if linkPhase == .connected {
                // tuya_mqtt_loop: a lost link is connected again at once; backoff only after a
                // failed attempt.
                effects.append(.left(why: describe(trouble, link: .device)))
                effects.append(.cancelTimer(.upgradeCheck))
                if pendingRPC != nil {
                    pendingRPC = nil
                    effects.append(.cancelTimer(.rpcTimeout))
                }
                effects.append(.log(.warning, "device link: \(describe(trouble, link: .device)); connecting again"))
                connectDeviceLink(now: now, into: &effects)
                return
            }
            let delay = nextMQTTDelay()
            effects.append(.log(.error, "device link: \(describe(trouble, link: .device)); retrying in \(Self.describe(delay))"))
            backoff(.deviceLink, delay: delay, now: now, into: &effects)
        default:
            effects.append(.log(.debug, "MQTT \(describe(trouble, link: .device)) ignored: no link is in use"))
        }
    }

    /// CONNACK 5 on the device link (`mqtt_client_unbind_on`): the device was removed from its home.
    mutating func unbind(now: Int64, into effects: inout [CloudJoinEffect]) {
        guard let activation = state.activation, let endpoints = state.endpoints else {
            finishUnbind(now: now, into: &effects)
            return
        }
        effects.append(.log(.error, "the broker refused the device (CONNACK 5, not authorized): it was removed from its home in the app; erasing the activation and pairing again"))
        let id = takeRequestId()
        do {
            let request = try InfoSync.request(devId: activation.devId, secKey: activation.secKey, t: Self.seconds(now))
                .httpsRequest(id: id, purpose: .syncInfo, endpoints: endpoints)
            phase = .unbound(request: id)
            effects.append(.httpsRequest(request))
        } catch {
            finishUnbind(now: now, into: &effects)
        }
    }

    /// One phrase for a link problem, with what the user should do.
    func describe(_ trouble: LinkTrouble, link: MQTTConnectRequest.Link) -> String {
        switch trouble {
        case .connack(let code):
            let meaning: String
            switch code {
            case 1: meaning = "unacceptable protocol version"
            case 2: meaning = "client id rejected"
            case 3: meaning = "server unavailable"
            case 4: meaning = "bad user name or password"
            case 5: meaning = "not authorized"
            default: meaning = "refusal code \(code)"
            }
            let advice = link == .direct
                ? (code == 4 || code == 5 ? " (the broker does not accept this uuid and authkey: use the pair issued together, for a product that allows direct pairing)" : "")
                : (code == 4 ? " (the secKey does not match the devId: unpair and pair again)" : "")
            return "the broker refused the connection (CONNACK \(code), \(meaning))\(advice)"
        case .connectFailed(let why):
            return "the connection failed: \(why) (check the network, and that the broker's certificate verifies against the CA iotdns gave)"
        case .disconnected(let why):
            return "the link went down: \(why)"
        }
    }
}
