import ControlAPISpec

/// What `GET /api/cloud` tells (openapi.yaml `CloudState`): the join of a device to a cloud
/// (`ipcemu run --cloud tuya`, PROTOCOL.md 9). The process that joins fills it in; this module
/// knows nothing of the cloud itself.
public struct CloudConsoleStatus: Sendable, Equatable {
    public enum State: String, Sendable, CaseIterable {
        case idle, endpoints, directLink, tokenPending, activating, versions, connecting, joined, unbound, backoff
    }

    public var state: State
    /// The join machine's phase in words.
    public var detail: String
    public var uuid: String
    public var productKey: String
    /// HOST:PORT of iotdns.
    public var iotdns: String
    /// While pairing: the QR code's text, and the code as SVG.
    public var pairingURL: String?
    public var qrSVG: String?
    /// Once activated / joined.
    public var devId: String?
    public var broker: String?
    /// The last warning or error line of the join, and when (unix ms).
    public var lastError: String?
    public var lastErrorAt: Int64?

    public init(state: State, detail: String, uuid: String, productKey: String, iotdns: String) {
        self.state = state
        self.detail = detail
        self.uuid = uuid
        self.productKey = productKey
        self.iotdns = iotdns
    }
}

/// Gives the cloud join's state when asked (`DeviceRegistry.setCloud`).
public typealias CloudConsoleSource = @Sendable () async -> CloudConsoleStatus

extension ControlHandlers {
    func getCloud(_ input: Operations.GetCloud.Input) async throws -> Operations.GetCloud.Output {
        guard let source = await registry.cloud else { throw ControlError(status: 404, "this process is not on a cloud (no --cloud)") }
        let s = await source()
        let state = S.CloudState.StatePayload(rawValue: s.state.rawValue) ?? .idle
        return .ok(.init(body: .json(S.CloudState(
            state: state, detail: s.detail, uuid: s.uuid, productKey: s.productKey, iotdns: s.iotdns,
            pairingURL: s.pairingURL, qrSVG: s.qrSVG, devId: s.devId, broker: s.broker,
            lastError: s.lastError, lastErrorAt: s.lastErrorAt))))
    }
}
