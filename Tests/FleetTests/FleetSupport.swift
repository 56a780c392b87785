import DeviceProfile
import Emulator
import Foundation
import IPCWire
import MQTTTransport
import TestSupport

/// Every device's retained online status (`smart/device/meta/<devId>/online`), as a broker
/// subscriber sees it.
final class Presence: @unchecked Sendable {
    private let lock = NSLock()
    private var state: [String: Bool] = [:]
    let client: MQTTClient

    init(broker: MosquittoBroker, clientID: String = "presence-\(UInt32.random(in: 0...UInt32.max))") async throws {
        client = try MQTTClient(options: broker.clientOptions(clientID: clientID))
        client.setMessageHandler { [weak self] m in
            let parts = m.topic.split(separator: "/")
            guard parts.count >= 2 else { return }
            let online = m.payloadText.contains(#""online":true"#)
            self?.lock.withLock { self?.state[String(parts[parts.count - 2])] = online }
        }
        try client.subscribe("smart/device/meta/+/online", qos: 1)
        client.connect()
        _ = await client.waitUntilConnected()
        try await client.subscribeAndWait("smart/device/meta/+/online", qos: 1)
    }

    var online: Set<String> { lock.withLock { Set(state.filter { $0.value }.keys) } }
    var offline: Set<String> { lock.withLock { Set(state.filter { !$0.value }.keys) } }
    var seen: Set<String> { lock.withLock { Set(state.keys) } }

    func close() { client.close() }
}

/// The doorbell template with `{index:4}` in its devId, as a fleet would use it.
func doorbellTemplate(prefix: String = "door") throws -> DeviceProfile {
    var p = try DeviceProfile.load(path: packageRootPath + "/device-profiles/doorbell.yaml")
    p.identity.devId = "\(prefix)-{index:4}"
    return p
}

func panelTemplate(prefix: String = "panel") throws -> DeviceProfile {
    var p = try DeviceProfile.load(path: packageRootPath + "/device-profiles/control-panel.yaml")
    p.identity.devId = "\(prefix)-{index:4}"
    return p
}

/// Writes a template profile file (the doorbell with another devId and extra broker lines).
func writeTemplate(_ dir: TemporaryDirectory, name: String, devId: String, broker: [String] = []) throws -> String {
    var text = try String(contentsOfFile: packageRootPath + "/device-profiles/doorbell.yaml", encoding: .utf8)
    text = text.replacingOccurrences(of: "devId: ipcemu-doorbell-0001", with: "devId: \"\(devId)\"")
    if !broker.isEmpty { text += "\nbroker:\n" + broker.map { "  " + $0 }.joined(separator: "\n") + "\n" }
    let path = dir.file(name)
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

/// Parses the JSON lines `ipcemu fleet --json` printed.
func jsonEvents(_ stdout: String) -> [[String: Any]] {
    stdout.split(separator: "\n").compactMap {
        try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
}

extension JSONValue {
    subscript(_ key: String) -> JSONValue? {
        if case .object(let o) = self { o[key] } else { nil }
    }
    var int: Int64? { if case .int(let i) = self { i } else { nil } }
    var array: [JSONValue]? { if case .array(let a) = self { a } else { nil } }
}
