import IPCWire
@testable import TuyaCloud

/// A small fake cloud for the join machine's tests: the answers a stand-in would give.
enum FakeCloud {
    static let authkey = SDKVectorTests.authkey
    static let uuid = SDKVectorTests.uuid
    static let devId = SDKVectorTests.devId
    static let secKey = SDKVectorTests.secKey
    static let localKey = SDKVectorTests.localKey
    static let caDER: [UInt8] = Array(0..<64)

    static func licence() throws -> TuyaLicence {
        try TuyaLicence(productKey: SDKVectorTests.productKey, uuid: uuid, authkey: authkey)
    }

    static func config(skill: String? = nil) throws -> CloudJoinConfig {
        CloudJoinConfig(licence: try licence(), softwareVersion: "1.0.0",
                        iotdns: IotDNSServer(host: "127.0.0.9", port: 8443, caDER: [9, 9]), skill: skill, jitterSeed: 42)
    }

    static func iotdnsBody(missing: String? = nil) -> [UInt8] {
        var fields = [
            #""caArr":["\#(TuyaCrypto.base64Encode(caDER))"]"#,
            #""httpsSelfUrl":{"addr":"https://127.0.0.10/d.json"}"#,
            #""mqttsSelfUrl":{"addr":"127.0.0.11:8883"}"#,
        ]
        if let missing { fields.removeAll { $0.hasPrefix("\"\(missing)\"") } }
        return Array(("{" + fields.joined(separator: ",") + "}").utf8)
    }

    static let endpoints = CloudEndpoints(atopHost: "127.0.0.10", atopPort: 443, atopPath: "/d.json", mqttHost: "127.0.0.11",
                                          mqttPort: 8883, caDER: caDER)

    static let schema = #"[{\"mode\":\"rw\",\"code\":\"switch\",\"property\":{\"type\":\"bool\"},\"id\":1,\"type\":\"obj\"}]"#

    static func activationBody() throws -> [UInt8] {
        try ATOPAnswer.sealed(plainAnswer: #"{"result":{"devId":"\#(devId)","secKey":"\#(secKey)","localKey":"\#(localKey)","schemaId":"s1","schema":"\#(schema)","stdTimeZone":"+01:00"},"success":true,"t":1}"#,
                              key: authkey, t: 1)
    }

    static func okBody(status: String? = nil) throws -> [UInt8] {
        let result = status.map { #"{"status":"\#($0)"}"# } ?? "true"
        return try ATOPAnswer.sealed(plainAnswer: #"{"result":\#(result),"success":true,"t":1}"#, key: secKey, t: 1)
    }

    static func refusal(_ code: String) -> [UInt8] {
        Array(#"{"success":false,"errorCode":"\#(code)","errorMsg":"msg","t":1}"#.utf8)
    }

    static func tokenFrame(authkey: String = authkey) throws -> [UInt8] {
        try ActivationToken.seal(ActivationToken(token: "EUtok123", region: "EU", env: "pro"), authkey: authkey, t: 1)
    }

    static func activation() -> ActivationResult {
        ActivationResult(devId: devId, secKey: secKey, localKey: localKey, schemaId: "s1",
                         schema: #"[{"mode":"rw","code":"switch","property":{"type":"bool"},"id":1,"type":"obj"}]"#, stdTimeZone: "+01:00")
    }

    static func activatedState(versions: Bool = true) -> CloudState {
        CloudState(uuid: uuid, region: "EU", env: "pro", endpoints: endpoints, activation: activation(),
                   syncedVersions: versions ? VersionsUpdate.versionsText(softwareVersion: "1.0.0") : nil)
    }
}

/// Drives a machine and keeps what it said.
struct JoinDriver {
    var machine: CloudJoinMachine
    var now: Int64 = 1_732_200_000_000
    var effects: [CloudJoinEffect] = []

    init(_ config: CloudJoinConfig) {
        machine = CloudJoinMachine(config: config)
    }

    @discardableResult
    mutating func feed(_ input: CloudJoinInput) -> [CloudJoinEffect] {
        effects = machine.handle(input, now: now)
        return effects
    }

    /// The HTTPS request of the last effects (exactly one expected).
    var request: HTTPSRequest? {
        let requests = effects.compactMap { effect -> HTTPSRequest? in
            if case .httpsRequest(let r) = effect { return r }
            return nil
        }
        return requests.count == 1 ? requests[0] : nil
    }

    var connect: MQTTConnectRequest? {
        effects.lazy.compactMap { effect -> MQTTConnectRequest? in
            if case .mqttConnect(let r) = effect { return r }
            return nil
        }.first
    }

    var logs: [String] {
        effects.compactMap { effect in
            if case .log(_, let text) = effect { return text }
            return nil
        }
    }

    var stored: CloudState? {
        effects.compactMap { effect -> CloudState? in
            if case .storeState(let s) = effect { return s }
            return nil
        }.last
    }

    var retryAt: Int64? {
        effects.lazy.compactMap { effect -> Int64? in
            if case .armTimer(.retry, let at) = effect { return at }
            return nil
        }.first
    }

    /// Answers the pending HTTPS request.
    @discardableResult
    mutating func answer(_ body: [UInt8], status: Int = 200) -> [CloudJoinEffect] {
        guard let id = request?.id else { return [] }
        return feed(.httpsAnswered(id: id, status: status, body: body))
    }

    @discardableResult
    mutating func fail(_ why: String) -> [CloudJoinEffect] {
        guard let id = request?.id else { return [] }
        return feed(.httpsFailed(id: id, why: why))
    }

    /// From `start(nil)` to waiting for the token.
    mutating func pairUntilToken() {
        feed(.start(nil))
        answer(FakeCloud.iotdnsBody())
        feed(.mqttConnected)
    }

    /// From `start(nil)` to the activation request in flight.
    mutating func pairUntilActivation() throws {
        pairUntilToken()
        feed(.tokenMessage(try FakeCloud.tokenFrame()))
        answer(FakeCloud.iotdnsBody())
    }
}
