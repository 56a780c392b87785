import CMosquitto
#if canImport(Glibc)
import Glibc
#endif

// libmosquitto's callbacks. Each is a file-scope function (DESIGN.md interop rules: a closure
// literal handed to C may crash when a C thread calls it). The context pointer is the
// `ClientConnection`, passed with `Unmanaged.passUnretained`; the connection keeps itself alive
// while its libmosquitto handle exists (the worker holds it until `mosquitto_destroy`).
//
// They run inside a libmosquitto call that we made with the connection's mutex held, so they only
// record what happened; handlers run after the mutex is released.

private func connection(_ context: UnsafeMutableRawPointer?) -> ClientConnection? {
    guard let context else { return nil }
    return Unmanaged<ClientConnection>.fromOpaque(context).takeUnretainedValue()
}

func mqttConnectCallback(_ mosq: OpaquePointer?, _ context: UnsafeMutableRawPointer?, _ code: Int32) {
    connection(context)?.libraryDidConnect(code: code)
}

func mqttDisconnectCallback(
    _ mosq: OpaquePointer?, _ context: UnsafeMutableRawPointer?, _ code: Int32
) {
    let systemError = errno  // the failing send/recv/connect's errno, read before anything else
    connection(context)?.libraryDidDisconnect(code: code, systemError: systemError)
}

func mqttMessageCallback(
    _ mosq: OpaquePointer?, _ context: UnsafeMutableRawPointer?,
    _ message: UnsafePointer<mosquitto_message>?
) {
    guard let connection = connection(context), let message else { return }
    let raw = message.pointee
    let length = Int(raw.payloadlen)
    guard length <= connection.settings.options.maxInboundPayloadBytes else {
        connection.libraryDroppedOversizeMessage()
        return
    }
    // Copy now: topic and payload belong to libmosquitto and die when this callback returns.
    let topic = raw.topic.map { String(cString: $0) } ?? ""
    var payload: [UInt8] = []
    if length > 0, let bytes = raw.payload {
        payload = Array(UnsafeRawBufferPointer(start: bytes, count: length))
    }
    connection.libraryDidReceive(
        MQTTMessage(topic: topic, payload: payload, qos: Int(raw.qos), retain: raw.retain))
}

func mqttPublishCallback(_ mosq: OpaquePointer?, _ context: UnsafeMutableRawPointer?, _ mid: Int32) {
    connection(context)?.libraryDidPublish(mid: mid)
}

func mqttSubscribeCallback(
    _ mosq: OpaquePointer?, _ context: UnsafeMutableRawPointer?, _ mid: Int32, _ count: Int32,
    _ grantedQoS: UnsafePointer<Int32>?
) {
    var granted: [Int32] = []
    if let grantedQoS, count > 0 {
        granted = Array(UnsafeBufferPointer(start: grantedQoS, count: Int(count)))
    }
    connection(context)?.libraryDidSubscribe(mid: mid, grantedQoS: granted)
}

/// Set only around `mosquitto_loop_misc` (`ClientConnection.checkKeepalive`): libmosquitto logs
/// "Client <id> sending PINGREQ" when it sends one, the only way it tells. Never set otherwise
/// (libmosquitto formats every log line only while a log callback is set).
func mqttKeepaliveLogCallback(
    _ mosq: OpaquePointer?, _ context: UnsafeMutableRawPointer?, _ level: Int32, _ text: UnsafePointer<CChar>?
) {
    guard let text, strstr(text, "sending PINGREQ") != nil else { return }
    connection(context)?.librarySentPing()
}
