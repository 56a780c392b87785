/// Where a join machine is (PROTOCOL.md 9; docs/tuya-cloud.md draws the transitions).
public enum CloudJoinPhase: Sendable, Equatable {
    /// Not started (or unpaired and waiting for the next `start`).
    case idle
    /// Asking iotdns for the endpoints (`request` is the id of the request in flight).
    case resolvingEndpoints(ResolvePurpose, request: UInt64)
    /// The direct link: connecting, then waiting for the token.
    case directLink(DirectLinkPhase)
    /// Activating with the token (`tuya.device.active`).
    case activating(request: UInt64)
    /// `tuya.device.versions.update`.
    case updatingVersions(request: UInt64)
    /// `tuya.device.skill.update`.
    case uploadingSkill(request: UInt64)
    /// The device link.
    case deviceLink(DeviceLinkPhase)
    /// CONNACK 5: asking `tuya.device.info.sync` before erasing the activation and pairing again.
    case unbound(request: UInt64)
    /// Waiting until `retryAt` (unix ms) to retry `step`.
    case backoff(retryAt: Int64, step: RetryStep)
}

/// Why endpoints are being resolved.
public enum ResolvePurpose: Sendable, Equatable {
    /// Before pairing: no region yet (`tuya_endpoint_update_auto_region`).
    case pairing
    /// The token arrived: resolve again with its region and env, then activate.
    case afterToken
    /// Starting with a stored activation: resolve with the stored region and env, then connect.
    case resume
}

public enum DirectLinkPhase: Sendable, Equatable {
    case connecting
    case waitingForToken
}

public enum DeviceLinkPhase: Sendable, Equatable {
    case connecting
    case connected
}

/// What a backoff retries.
public enum RetryStep: Sendable, Equatable {
    case resolve(ResolvePurpose)
    case directLink
    case activate
    case deviceLink
}
