extension CloudJoinMachine {
    /// `start`: with a stored activation, resume (resolve with the stored region, update versions,
    /// connect as the device: `STATE_DATA_LOAD` with `is_activated`); without one, pair
    /// (`STATE_TOKEN_PENDING`). A state for another uuid, or of another format, is ignored.
    mutating func receiveStart(_ loaded: CloudState?, now: Int64, into effects: inout [CloudJoinEffect]) {
        guard phase == .idle else {
            effects.append(.log(.warning, "start ignored: the cloud join is already running"))
            return
        }
        httpsFailures = 0
        mqttJitterMax = Self.mqttBackoffMinMs
        var kept = CloudState(uuid: config.licence.uuid)
        if let loaded {
            if loaded.uuid != config.licence.uuid {
                effects.append(.log(.warning, "the cloud state is for uuid \(loaded.uuid), not \(config.licence.uuid): ignored; the device pairs as new"))
            } else if loaded.format != CloudState.currentFormat {
                effects.append(.log(.warning, "the cloud state has format \(loaded.format), not \(CloudState.currentFormat): ignored; the device pairs as new"))
            } else {
                kept = loaded
            }
        }
        state = kept
        if let activation = kept.activation {
            effects.append(.log(.info, "resuming as devId \(activation.devId) (region \(kept.region ?? "none"), env \(kept.env ?? config.defaultEnv))"))
            resolve(.resume, now: now, into: &effects)
        } else {
            beginPairing(now: now, into: &effects)
        }
    }
}
