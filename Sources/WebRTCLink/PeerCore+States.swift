// The link state (PROTOCOL.md section 4): what webrtcbin's ICE, peer connection and DTLS states
// and the pipeline's bus make of it, and the watchdog that hooks late transports and notices
// silence.
import CGstWebRTC
import Dispatch

// MARK: - webrtcbin's states, by name (the CGW_* constants of cgstwebrtc.h)

/// webrtcbin's ice-connection-state (GstWebRTCICEConnectionState).
enum ICEConnectionState: Sendable {
    case new, checking, connected, completed, failed, disconnected, closed

    /// nil for a value this GStreamer does not define.
    init?(_ value: Int32) {
        switch value {
        case Int32(CGW_ICE_CONNECTION_NEW): self = .new
        case Int32(CGW_ICE_CONNECTION_CHECKING): self = .checking
        case Int32(CGW_ICE_CONNECTION_CONNECTED): self = .connected
        case Int32(CGW_ICE_CONNECTION_COMPLETED): self = .completed
        case Int32(CGW_ICE_CONNECTION_FAILED): self = .failed
        case Int32(CGW_ICE_CONNECTION_DISCONNECTED): self = .disconnected
        case Int32(CGW_ICE_CONNECTION_CLOSED): self = .closed
        default: return nil
        }
    }
}

/// webrtcbin's connection-state (GstWebRTCPeerConnectionState).
enum PeerConnectionState: Sendable {
    case new, connecting, connected, disconnected, failed, closed

    init?(_ value: Int32) {
        switch value {
        case Int32(CGW_PEER_CONNECTION_NEW): self = .new
        case Int32(CGW_PEER_CONNECTION_CONNECTING): self = .connecting
        case Int32(CGW_PEER_CONNECTION_CONNECTED): self = .connected
        case Int32(CGW_PEER_CONNECTION_DISCONNECTED): self = .disconnected
        case Int32(CGW_PEER_CONNECTION_FAILED): self = .failed
        case Int32(CGW_PEER_CONNECTION_CLOSED): self = .closed
        default: return nil
        }
    }
}

/// webrtcbin's ice-gathering-state (GstWebRTCICEGatheringState).
enum ICEGatheringState: Sendable {
    case new, gathering, complete

    init?(_ value: Int32) {
        switch value {
        case Int32(CGW_ICE_GATHERING_NEW): self = .new
        case Int32(CGW_ICE_GATHERING_GATHERING): self = .gathering
        case Int32(CGW_ICE_GATHERING_COMPLETE): self = .complete
        default: return nil
        }
    }
}

/// The DTLS transport's state (GstWebRTCDTLSTransportState).
enum DTLSTransportState: Sendable {
    case new, closed, failed, connecting, connected

    init?(_ value: Int32) {
        switch value {
        case Int32(CGW_DTLS_NEW): self = .new
        case Int32(CGW_DTLS_CLOSED): self = .closed
        case Int32(CGW_DTLS_FAILED): self = .failed
        case Int32(CGW_DTLS_CONNECTING): self = .connecting
        case Int32(CGW_DTLS_CONNECTED): self = .connected
        default: return nil
        }
    }
}

extension PeerCore {
    // MARK: What webrtcbin reports

    func iceConnectionState(_ value: Int32) {
        switch ICEConnectionState(value) {
        case .failed: fail(.iceFailed)
        case .disconnected: fail(.iceDisconnected)
        case .connected, .completed: events.videoReceiveStep?(.iceConnected)
        case .new, .checking, .closed, nil: break
        }
    }

    func peerConnectionState(_ value: Int32) {
        switch PeerConnectionState(value) {
        case .connected:
            fields.withLock { $0.lastPeerPacketUptime = DispatchTime.now().uptimeNanoseconds }
            transition(to: .connected)
        case .disconnected: fail(.iceDisconnected)
        case .failed: fail(.connectionFailed)
        case .closed: fail(.dtlsClosed)
        case .new, .connecting, nil: break
        }
    }

    func dtlsState(_ value: Int32) {
        switch DTLSTransportState(value) {
        case .closed: fail(.dtlsClosed)
        case .failed: fail(.dtlsFailed)
        case .new, .connecting, .connected, nil: break
        }
    }

    func busMessage(kind: Int32, source: String, text: String) {
        guard kind == Int32(CGW_BUS_ERROR) else { return }
        if OutputDescriptions.isOutputElement(source) {
            // A display or playback sink failed: its branch stops (guarded), the call goes on.
            let first = fields.withLock { $0.outputFailuresReported.insert(source).inserted }
            if first { events.outputProblem?("\(source) failed: \(text)") }
            return
        }
        fail(.pipelineError("\(source): \(text)"))
    }

    // MARK: The link state

    func fail(_ reason: LinkLossReason) { transition(to: .lost(reason)) }

    /// Moves to a new state unless the current one is final or the core is closed.
    func transition(to next: LinkState) {
        let changed: Bool = fields.withLock { f in
            guard f.phase != .closed, !f.state.isFinal, f.state != next else { return false }
            f.state = next
            return true
        }
        guard changed else { return }
        if next == .connected { sendHeldVideoSoon() }
        events.stateChanged(next)
    }

    var currentState: LinkState { fields.withLock { $0.state } }

    // MARK: Watchdog (shared loop thread)

    /// Hooks what only exists after negotiation (RTCP counting and interval, DTLS state), then
    /// checks for silence. Returns false to stop ticking.
    func watchdogTick() -> Bool {
        let (current, webrtcElement, attached, linkState, lastPacket, heardAny) = fields.withLock { f in
            (f.phase, f.webrtc, f.hooks, f.state, f.lastPeerPacketUptime,
             f.statistics.rtcpReportsReceived + f.statistics.videoPacketsReceived + f.statistics.audioPacketsReceived > 0)
        }
        guard current != .closed, let webrtc = webrtcElement else { return false }
        let now = DispatchTime.now().uptimeNanoseconds
        // A receive path that delivered within the last 2 s is not stalled: the walk over every
        // element of webrtcbin (twice a second per link) is skipped while packets come (issue 24
        // item 5: with the loop's wake-ups, about 6% of a fleet link's CPU in a perf of 40 links).
        let delivering = linkState == .connected && heardAny && now &- lastPacket < 2_000_000_000
        if !delivering {
            let restarted = cgw_webrtc_restart_stalled_receivers(webrtc)
            if restarted > 0 { fields.withLock { $0.stalledRestarts += Int(restarted) } }
        }
        if case .pending = attached.rtcpCounter,
           cgw_webrtc_count_received_rtcp(webrtc, onRTCPReceived, CoreReference.retained(self), releaseCoreReference) > 0 {
            fields.withLock { $0.hooks.rtcpCounter = .attached }
        }
        if case .pending = attached.rtcpInterval, cgw_webrtc_set_rtcp_interval(webrtc, UInt32(max(100, options.rtcpIntervalMs))) > 0 {
            fields.withLock { $0.hooks.rtcpInterval = .attached }
        }
        if case .pending = attached.dtls {
            var transport: UnsafeMutableRawPointer?
            let handler = cgw_connect_dtls_transport_state(webrtc, onDTLSState, CoreReference.retained(self), releaseCoreReference, &transport)
            if handler != 0, let transport {
                let ref = GstRef(transport)
                fields.withLock { $0.hooks.dtls = .attached(handler: handler, transport: ref.raw) }
            } else if let transport {
                cgw_object_unref(transport)
            }
        }
        if linkState == .connected {
            let silentFor = now &- lastPacket
            if silentFor > options.silenceTimeout.nanoseconds { fail(.peerSilent) }
        }
        return !currentState.isFinal
    }
}
