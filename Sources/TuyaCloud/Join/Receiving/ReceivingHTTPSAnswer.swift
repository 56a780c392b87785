extension CloudJoinMachine {
    /// An HTTPS answer: routed by the phase that asked for it; an answer to anything else (late, or
    /// after an unpair) is ignored.
    mutating func receiveHTTPSAnswer(id: UInt64, status: Int, body: [UInt8], now: Int64, into effects: inout [CloudJoinEffect]) {
        switch phase {
        case .resolvingEndpoints(let purpose, let request) where request == id:
            answerResolve(purpose, status: status, body: body, now: now, into: &effects)
        case .activating(let request) where request == id:
            answerActivation(status: status, body: body, now: now, into: &effects)
        case .updatingVersions(let request) where request == id:
            answerVersions(status: status, body: body, now: now, into: &effects)
        case .uploadingSkill(let request) where request == id:
            answerSkill(status: status, body: body, now: now, into: &effects)
        case .unbound(let request) where request == id:
            answerInfoSync(status: status, body: body, now: now, into: &effects)
        default:
            effects.append(.log(.debug, "HTTPS answer \(id) ignored: nothing is waiting for it"))
        }
    }

    /// An HTTPS request failed before any answer.
    mutating func receiveHTTPSFailure(id: UInt64, why: String, now: Int64, into effects: inout [CloudJoinEffect]) {
        switch phase {
        case .resolvingEndpoints(let purpose, let request) where request == id:
            resolveFailed(purpose, why: "the request failed: \(why). Check the network, and that iotdns's certificate verifies against the pinned CA",
                          now: now, into: &effects)
        case .activating(let request) where request == id:
            let delay = nextHTTPSDelay()
            effects.append(.log(.error, "activation failed: the request to the API failed: \(why). Check the network, and that the API's certificate verifies against the CA iotdns gave; retrying in \(Self.describe(delay))"))
            backoff(.activate, delay: delay, now: now, into: &effects)
        case .updatingVersions(let request) where request == id:
            effects.append(.log(.warning, "versions update failed: \(why); going on without it, as the SDK does"))
            uploadSkill(now: now, into: &effects)
        case .uploadingSkill(let request) where request == id:
            effects.append(.log(.warning, "skill upload failed: \(why); going on without it"))
            connectDeviceLink(now: now, into: &effects)
        case .unbound(let request) where request == id:
            effects.append(.log(.warning, "tuya.device.info.sync failed: \(why); erasing the activation anyway"))
            finishUnbind(now: now, into: &effects)
        default:
            effects.append(.log(.debug, "HTTPS failure of request \(id) ignored: nothing is waiting for it"))
        }
    }

    // MARK: iotdns

    mutating func answerResolve(_ purpose: ResolvePurpose, status: Int, body: [UInt8], now: Int64, into effects: inout [CloudJoinEffect]) {
        let endpoints: CloudEndpoints
        do {
            endpoints = try IotDNSAnswer.parse(body)
        } catch {
            resolveFailed(purpose, why: "the answer (HTTP \(status)) is unusable: \(error). Check the iotdns address (a private cloud or stand-in must answer as Tuya's does)",
                          now: now, into: &effects)
            return
        }
        httpsFailures = 0
        effects.append(.log(.info, "endpoints: API \(endpoints.atopHost), MQTT \(endpoints.mqttHost):\(endpoints.mqttPort)"))
        var next = state
        next.endpoints = endpoints
        if purpose == .pairing {
            state = next
        } else if next != state {
            store(next, into: &effects)
        }
        resolved(purpose, now: now, into: &effects)
    }

    /// iotdns failed: go on with the endpoints it gave before, if any (the SDK goes on with its
    /// built-in table); otherwise retry with backoff.
    mutating func resolveFailed(_ purpose: ResolvePurpose, why: String, now: Int64, into effects: inout [CloudJoinEffect]) {
        if let known = state.endpoints {
            effects.append(.log(.warning, "iotdns failed: \(why); going on with the endpoints it gave before (API \(known.atopHost), MQTT \(known.mqttHost):\(known.mqttPort))"))
            resolved(purpose, now: now, into: &effects)
            return
        }
        let delay = nextHTTPSDelay()
        effects.append(.log(.error, "iotdns failed: \(why); retrying in \(Self.describe(delay))"))
        backoff(.resolve(purpose), delay: delay, now: now, into: &effects)
    }

    // MARK: Activation

    mutating func answerActivation(status: Int, body: [UInt8], now: Int64, into effects: inout [CloudJoinEffect]) {
        let result: ActivationResult
        do {
            let answer = try ATOPAnswer.decode(body, key: config.licence.authkey, limit: ATOPRequest.activationAnswerLimit)
            result = try ActivationResult.decode(answer)
        } catch {
            if case .refused(let refusal) = error {
                switch refusal.kind {
                case .tokenInvalid, .deviceNotFound:
                    effects.append(.log(.error, "activation \(refusal); pairing again"))
                    beginPairing(now: now, into: &effects)
                    return
                case .signatureInvalid, .productNotFound, .other:
                    let delay = nextHTTPSDelay()
                    effects.append(.log(.error, "activation \(refusal); retrying in \(Self.describe(delay))"))
                    backoff(.activate, delay: delay, now: now, into: &effects)
                    return
                }
            }
            let delay = nextHTTPSDelay()
            effects.append(.log(.error, "activation failed: the answer (HTTP \(status)) is unusable: \(error). Check that the API address is Tuya's (or a stand-in that answers as it does); retrying in \(Self.describe(delay))"))
            backoff(.activate, delay: delay, now: now, into: &effects)
            return
        }
        httpsFailures = 0
        token = nil
        var next = state
        next.activation = result
        store(next, into: &effects)
        effects.append(.log(.info, "activated as devId \(result.devId) (schema \(result.schemaId), \(result.dataPoints.count) data points, time zone \(result.stdTimeZone))"))
        if let problem = result.schemaProblem {
            effects.append(.log(.warning, "the product's schema does not parse (\(problem)); the device runs without the cloud's DP definitions"))
        }
        if result.resetFactory {
            effects.append(.log(.info, "the cloud says the app reset this device to factory settings (resetFactory)"))
        }
        updateVersions(now: now, into: &effects)
    }

    // MARK: Versions and skill (failures never stop the join, as in `run_state_startup_update`)

    mutating func answerVersions(status: Int, body: [UInt8], now: Int64, into effects: inout [CloudJoinEffect]) {
        if let problem = problem(with: body, status: status) {
            effects.append(.log(.warning, "versions update \(problem); going on without it, as the SDK does"))
        } else {
            var next = state
            next.syncedVersions = VersionsUpdate.versionsText(softwareVersion: config.softwareVersion, modules: config.modules)
            store(next, into: &effects)
            effects.append(.log(.info, "versions updated (softVer \(config.softwareVersion))"))
        }
        uploadSkill(now: now, into: &effects)
    }

    mutating func answerSkill(status: Int, body: [UInt8], now: Int64, into effects: inout [CloudJoinEffect]) {
        if let problem = problem(with: body, status: status) {
            effects.append(.log(.warning, "skill upload \(problem); going on without it"))
        } else {
            var next = state
            next.syncedSkill = config.skill
            store(next, into: &effects)
            effects.append(.log(.info, "skill uploaded"))
        }
        connectDeviceLink(now: now, into: &effects)
    }

    /// What is wrong with an answer to a request signed with the secKey; nil for a success.
    func problem(with body: [UInt8], status: Int) -> String? {
        guard let secKey = state.activation?.secKey else { return "has no activation to read it with" }
        do {
            let answer = try ATOPAnswer.decode(body, key: secKey, limit: ATOPRequest.answerLimit)
            if let refusal = answer.refusal { return "was \(refusal)" }
            return nil
        } catch {
            return "answer (HTTP \(status)) is unusable: \(error)"
        }
    }

    // MARK: Unbind (CONNACK 5)

    mutating func answerInfoSync(status: Int, body: [UInt8], now: Int64, into effects: inout [CloudJoinEffect]) {
        if let secKey = state.activation?.secKey,
           let answer = try? ATOPAnswer.decode(body, key: secKey, limit: ATOPRequest.answerLimit),
           let status = InfoSync.status(of: answer) {
            effects.append(.log(.info, "tuya.device.info.sync: \(status.rawValue)"))
        } else {
            effects.append(.log(.warning, "tuya.device.info.sync gave no status (HTTP \(status)); erasing the activation anyway"))
        }
        finishUnbind(now: now, into: &effects)
    }

    /// `run_state_reset`: keep the devId (for the next activation) and the synced versions, erase
    /// the rest, and pair again.
    mutating func finishUnbind(now: Int64, into effects: inout [CloudJoinEffect]) {
        let kept = CloudState(uuid: config.licence.uuid, previousDevId: state.activation?.devId ?? state.previousDevId,
                              syncedVersions: state.syncedVersions)
        effects.append(.eraseState)
        store(kept, into: &effects)
        beginPairing(now: now, into: &effects)
    }
}
