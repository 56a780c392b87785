import CMosquitto

/// A new libmosquitto handle set up from `MQTTClientOptions`: protocol, TCP_NODELAY (TCP only), in-flight
/// window, credentials, last will, TLS, and the callbacks (MosquittoCallbacks.swift).
enum MosquittoSetup {
    static func configure(_ mosq: OpaquePointer, options: MQTTClientOptions) throws(MQTTError) {
        func check(_ rc: Int32, _ what: String) throws(MQTTError) {
            guard rc == mosqSuccess else {
                throw .invalidOptions("\(what): \(MosquittoLibrary.describe(rc))")
            }
        }
        try check(
            mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, options.protocolVersion == .v5 ? 5 : 4),
            "protocol version")
        if options.usesUnixSocket {
            // The path is checked here too (options may be made without a URL): libmosquitto
            // would refuse it at every attempt with no reason a person can act on.
            _ = try MQTTBrokerEndpoint(url: MQTTBrokerEndpoint.unixURL(path: options.host))
            if let bind = options.bindAddress {
                throw .invalidOptions(
                    "a source address (\(bind)) cannot be used with a Unix socket broker: \(options.endpointDescription)")
            }
        } else {
            // DESIGN.md: loopback latency is Nagle's unless both ends disable it. Not on a Unix
            // socket: libmosquitto would fail to set it and log a warning at every connect.
            try check(mosquitto_int_option(mosq, MOSQ_OPT_TCP_NODELAY, 1), "TCP_NODELAY")
        }
        try check(
            mosquitto_int_option(mosq, MOSQ_OPT_SEND_MAXIMUM, Int32(clamping: max(1, options.maxInflightMessages))),
            "max inflight messages")
        if options.username != nil || options.password != nil {
            try check(
                mosquitto_username_pw_set(mosq, options.username, options.password),
                "username/password")
        }
        if let will = options.will {
            guard (0...2).contains(will.qos) else { throw .invalidOptions("will QoS \(will.qos)") }
            let rc = will.payload.withUnsafeBytes { bytes in
                mosquitto_will_set(
                    mosq, will.topic, Int32(bytes.count), bytes.baseAddress, Int32(will.qos), will.retain)
            }
            try check(rc, "last will on \(will.topic)")
        }
        if let tls = options.tls {
            if (tls.certFile == nil) != (tls.keyFile == nil) {
                throw .invalidOptions("TLS client certificate and key must be given together")
            }
            try check(
                mosquitto_tls_set(mosq, tls.caFile, nil, tls.certFile, tls.keyFile, nil),
                "TLS files (CA \(tls.caFile))")
            if tls.allowHostnameMismatch {
                try check(mosquitto_tls_insecure_set(mosq, true), "TLS insecure")
            }
        }
        mosquitto_connect_callback_set(mosq, mqttConnectCallback)
        mosquitto_disconnect_callback_set(mosq, mqttDisconnectCallback)
        mosquitto_message_callback_set(mosq, mqttMessageCallback)
        mosquitto_publish_callback_set(mosq, mqttPublishCallback)
        mosquitto_subscribe_callback_set(mosq, mqttSubscribeCallback)
    }
}
