/// Joining Tuya's cloud as a device (PROTOCOL.md 9), as a sans-IO state machine: inputs in, effects
/// out, time passed in beside each input, randomness from a seed. The runner carries out the
/// effects (HTTPS, MQTT, the state file, the QR code, timers) and feeds what happens back.
///
/// The path follows `src/tuya_iot.c`, `tuya_iot_yield` (STATE_START -> DATA_LOAD ->
/// TOKEN_PENDING -> ACTIVATING -> STARTUP_UPDATE -> MQTT_CONNECT_START ... MQTT_YIELD, and RESET on
/// an unbind), with the pairing round of `src/mqtt_bind.c`, `mqtt_bind_token_get`. Where the SDK
/// sleeps and retries, this arms a timer; docs/tuya-cloud.md lists each delay and where it comes from.
public struct CloudJoinMachine: Sendable {
    public let config: CloudJoinConfig
    public internal(set) var phase: CloudJoinPhase = .idle
    /// The state as last stored (or loaded).
    public internal(set) var state: CloudState

    /// The token of the pairing round in progress.
    var token: ActivationToken?
    var nextRequestId: UInt64 = 1
    var nextRPCId: UInt16 = 0
    /// The upgrade check awaiting its answer.
    var pendingRPC: UInt16?
    var random: SplitMix64
    /// The MQTT connect backoff of `utils/backoff_algorithm.c` as `tuya_mqtt_init` sets it up: the
    /// next delay is random in 0...jitterMax; jitterMax starts at 1 s and doubles up to 8 s
    /// (`MQTT_CONNECT_RETRY_MIN_DELAY_MS`, `MQTT_CONNECT_RETRY_MAX_DELAY_MS`).
    var mqttJitterMax: Int64 = CloudJoinMachine.mqttBackoffMinMs
    /// Consecutive failures of the HTTPS step being retried (the delay doubles with each).
    var httpsFailures = 0
    /// Whether an MQTT link was asked for and not closed since.
    var linkOpen = false
    /// Whether the pairing QR code is shown.
    var pairingShown = false

    static let mqttBackoffMinMs: Int64 = 1_000
    static let mqttBackoffMaxMs: Int64 = 8_000
    /// The direct link's extra wait after a failed connect (`mqtt_bind.c`: `system_sleep(2000)`).
    static let directLinkRetryMs: Int64 = 2_000
    /// HTTPS retries [ours]: 1 s (the SDK's activation retry), doubling, at most 60 s.
    static let httpsBackoffMinMs: Int64 = 1_000
    static let httpsBackoffMaxMs: Int64 = 60_000
    /// The upgrade check: 1 s after the device link connects, then every 24 h
    /// (`mqtt_client_connected_on`, `AUTO_UPGRADE_CHECK_INTERVAL`); its answer is due in 8 s.
    static let upgradeCheckFirstMs: Int64 = 1_000
    static let upgradeCheckPeriodMs: Int64 = 24 * 60 * 60 * 1_000

    public init(config: CloudJoinConfig) {
        self.config = config
        self.state = CloudState(uuid: config.licence.uuid)
        self.random = SplitMix64(seed: config.jitterSeed)
    }

    /// Feeds one input; returns what the runner must do, in order.
    public mutating func handle(_ input: CloudJoinInput, now: Int64) -> [CloudJoinEffect] {
        var effects: [CloudJoinEffect] = []
        switch input {
        case .start(let loaded): receiveStart(loaded, now: now, into: &effects)
        case .httpsAnswered(let id, let status, let body): receiveHTTPSAnswer(id: id, status: status, body: body, now: now, into: &effects)
        case .httpsFailed(let id, let why): receiveHTTPSFailure(id: id, why: why, now: now, into: &effects)
        case .mqttConnected: receiveMQTTConnected(now: now, into: &effects)
        case .mqttConnackRefused(let code): receiveMQTTRefusal(.connack(code), now: now, into: &effects)
        case .mqttConnectFailed(let why): receiveMQTTRefusal(.connectFailed(why), now: now, into: &effects)
        case .mqttDisconnected(let why): receiveMQTTRefusal(.disconnected(why), now: now, into: &effects)
        case .tokenMessage(let bytes): receiveTokenMessage(bytes, now: now, into: &effects)
        case .rpcAnswer(let bytes): receiveRPCAnswer(bytes, now: now, into: &effects)
        case .timerFired(let timer): receiveTimer(timer, now: now, into: &effects)
        case .unpair: receiveUnpair(now: now, into: &effects)
        }
        return effects
    }

    // MARK: Steps shared by the receivers

    mutating func takeRequestId() -> UInt64 {
        defer { nextRequestId &+= 1 }
        return nextRequestId
    }

    /// Unix seconds for the wire (`system_timestamp`).
    static func seconds(_ now: Int64) -> Int64 { now / 1_000 }

    /// PROTOCOL.md 9.2: show the QR code and resolve the endpoints without a region.
    mutating func beginPairing(now: Int64, into effects: inout [CloudJoinEffect]) {
        token = nil
        if !pairingShown {
            pairingShown = true
            effects.append(.showPairing(url: PairingURL.url(for: config.licence)))
        }
        effects.append(.log(.info, "pairing: scan the QR code \(PairingURL.url(for: config.licence)) with the Tuya or Smart Life app"))
        resolve(.pairing, now: now, into: &effects)
    }

    /// PROTOCOL.md 9.1: ask iotdns. `.pairing` without a region; the others with the stored one.
    mutating func resolve(_ purpose: ResolvePurpose, now: Int64, into effects: inout [CloudJoinEffect]) {
        let region: String? = purpose == .pairing ? nil : (state.region ?? "")
        let env = state.env ?? config.defaultEnv
        let id = takeRequestId()
        do {
            let request = try IotDNSRequest.request(id: id, server: config.iotdns, region: region, env: env)
            phase = .resolvingEndpoints(purpose, request: id)
            effects.append(.httpsRequest(request))
        } catch {
            phase = .idle
            effects.append(.log(.error, "cannot ask iotdns for the endpoints: \(error); fix the configuration and start again"))
        }
    }

    /// The endpoints are known: go on with what they were resolved for.
    mutating func resolved(_ purpose: ResolvePurpose, now: Int64, into effects: inout [CloudJoinEffect]) {
        switch purpose {
        case .pairing: connectDirectLink(now: now, into: &effects)
        case .afterToken: activate(now: now, into: &effects)
        case .resume: updateVersions(now: now, into: &effects)
        }
    }

    /// PROTOCOL.md 9.2: the direct link as `acon_<uuid>`.
    mutating func connectDirectLink(now: Int64, into effects: inout [CloudJoinEffect]) {
        guard let endpoints = state.endpoints else {
            beginPairing(now: now, into: &effects)
            return
        }
        phase = .directLink(.connecting)
        linkOpen = true
        effects.append(.mqttConnect(MQTTConnectRequest(link: .direct, host: endpoints.mqttHost, port: endpoints.mqttPort,
                                                       caDER: endpoints.caDER, credentials: .directLink(config.licence))))
    }

    /// PROTOCOL.md 9.3: `tuya.device.active` with the token.
    mutating func activate(now: Int64, into effects: inout [CloudJoinEffect]) {
        guard let token, let endpoints = state.endpoints else {
            beginPairing(now: now, into: &effects)
            return
        }
        let activation = ActivationRequest(licence: config.licence, token: token.token, softwareVersion: config.softwareVersion,
                                           t: Self.seconds(now), previousDevId: state.previousDevId, modules: config.modules,
                                           skill: config.skill)
        let id = takeRequestId()
        do {
            let request = try activation.request.httpsRequest(id: id, purpose: .activate, endpoints: endpoints)
            phase = .activating(request: id)
            effects.append(.log(.info, "activating with token \(token.token) at \(endpoints.atopHost)"))
            effects.append(.httpsRequest(request))
        } catch {
            phase = .idle
            effects.append(.log(.error, "cannot build the activation request: \(error); fix the configuration and start again"))
        }
    }

    /// PROTOCOL.md 9.3: `tuya.device.versions.update`, unless the stored text is the same.
    mutating func updateVersions(now: Int64, into effects: inout [CloudJoinEffect]) {
        guard let activation = state.activation, let endpoints = state.endpoints else {
            beginPairing(now: now, into: &effects)
            return
        }
        let text = VersionsUpdate.versionsText(softwareVersion: config.softwareVersion, modules: config.modules)
        guard text != state.syncedVersions else {
            uploadSkill(now: now, into: &effects)
            return
        }
        let id = takeRequestId()
        do {
            let request = try VersionsUpdate.request(devId: activation.devId, secKey: activation.secKey, versionsText: text,
                                                     t: Self.seconds(now)).httpsRequest(id: id, purpose: .updateVersions, endpoints: endpoints)
            phase = .updatingVersions(request: id)
            effects.append(.httpsRequest(request))
        } catch {
            effects.append(.log(.warning, "versions update skipped: \(error)"))
            uploadSkill(now: now, into: &effects)
        }
    }

    /// PROTOCOL.md 9.3 and 8.7: `tuya.device.skill.update` [ours], when configured and changed.
    mutating func uploadSkill(now: Int64, into effects: inout [CloudJoinEffect]) {
        guard config.uploadSkill, let skill = config.skill, skill != state.syncedSkill,
              let activation = state.activation, let endpoints = state.endpoints else {
            connectDeviceLink(now: now, into: &effects)
            return
        }
        let id = takeRequestId()
        do {
            let request = try SkillUpdate.request(devId: activation.devId, secKey: activation.secKey, skill: skill,
                                                  t: Self.seconds(now)).httpsRequest(id: id, purpose: .updateSkill, endpoints: endpoints)
            phase = .uploadingSkill(request: id)
            effects.append(.httpsRequest(request))
        } catch {
            effects.append(.log(.warning, "skill upload skipped: \(error)"))
            connectDeviceLink(now: now, into: &effects)
        }
    }

    /// PROTOCOL.md 9.4: the device link as `devId`.
    mutating func connectDeviceLink(now: Int64, into effects: inout [CloudJoinEffect]) {
        guard let activation = state.activation, let endpoints = state.endpoints else {
            beginPairing(now: now, into: &effects)
            return
        }
        httpsFailures = 0
        phase = .deviceLink(.connecting)
        linkOpen = true
        effects.append(.mqttConnect(MQTTConnectRequest(
            link: .device, host: endpoints.mqttHost, port: endpoints.mqttPort, caDER: endpoints.caDER,
            credentials: .deviceLink(devId: activation.devId, secKey: activation.secKey, localKey: activation.localKey))))
    }

    /// Stores `state` and emits the effect.
    mutating func store(_ newState: CloudState, into effects: inout [CloudJoinEffect]) {
        state = newState
        effects.append(.storeState(newState))
    }

    // MARK: Backoff

    /// Waits `delay` ms, then retries `step`.
    mutating func backoff(_ step: RetryStep, delay: Int64, now: Int64, into effects: inout [CloudJoinEffect]) {
        let at = now.addingReportingOverflow(delay).overflow ? Int64.max : now + delay
        phase = .backoff(retryAt: at, step: step)
        effects.append(.armTimer(.retry, at: at))
    }

    /// The next HTTPS retry delay: 1 s, 2 s, 4 s ... 60 s.
    mutating func nextHTTPSDelay() -> Int64 {
        let shift = min(httpsFailures, 6)
        httpsFailures += 1
        return min(Self.httpsBackoffMinMs << Int64(shift), Self.httpsBackoffMaxMs)
    }

    /// The next MQTT connect delay (`BackoffAlgorithm_GetNextBackoff`): random in 0...jitterMax,
    /// then jitterMax doubles, up to 8 s.
    mutating func nextMQTTDelay() -> Int64 {
        let delay = Int64(random.next() % UInt64(mqttJitterMax + 1))
        mqttJitterMax = mqttJitterMax < Self.mqttBackoffMaxMs / 2 ? mqttJitterMax * 2 : Self.mqttBackoffMaxMs
        return delay
    }

    /// Seconds, for log lines.
    static func describe(_ ms: Int64) -> String {
        ms % 1_000 == 0 ? "\(ms / 1_000) s" : "\(ms / 1_000).\(ms % 1_000 / 100) s"
    }
}

/// A small deterministic generator (SplitMix64) for the backoff jitter.
struct SplitMix64: Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
