// One WebRTC data channel of a link (PROTOCOL.md 7: the `fmp4Stream` channel of HEVC cameras):
// text and binary messages both ways over webrtcbin's SCTP association. The C side is
// cgst_datachannel.c.
//
// Threads: handlers run on GStreamer's threads (SCTP streaming threads); sends may come from any
// thread. Copy what you need and return quickly.
import CGstWebRTC
import Foundation
import Synchronization

public final class WebRTCDataChannel: Sendable {
    /// What the channel reports. Set once with `setHandlers` before anything is expected.
    public struct Handlers: Sendable {
        public var opened: @Sendable () -> Void
        public var closed: @Sendable () -> Void
        public var text: @Sendable (String) -> Void
        /// A binary message, borrowed for the call.
        public var bytes: @Sendable (UnsafeRawBufferPointer) -> Void
        public var error: @Sendable (String) -> Void

        public init(
            opened: @escaping @Sendable () -> Void = {}, closed: @escaping @Sendable () -> Void = {},
            text: @escaping @Sendable (String) -> Void = { _ in },
            bytes: @escaping @Sendable (UnsafeRawBufferPointer) -> Void = { _ in },
            error: @escaping @Sendable (String) -> Void = { _ in }
        ) {
            self.opened = opened
            self.closed = closed
            self.text = text
            self.bytes = bytes
            self.error = error
        }
    }

    public let label: String
    /// The channel's C object (a reference this wrapper owns until deinit) and what changes.
    private struct State {
        let channel: UnsafeMutableRawPointer
        var handlers: Handlers?
        var signalIds: [UInt] = []
        var openReported = false
    }
    private let state: Mutex<State>

    /// Takes over a channel reference from C.
    init(taking channel: UnsafeMutableRawPointer, label: String) {
        let ref = GstRef(channel)
        state = Mutex(State(channel: ref.raw))
        self.label = label
    }

    deinit {
        // Copied out: GObject is called with the Mutex released.
        let (channel, ids) = state.withLock { ($0.channel, $0.signalIds) }
        for id in ids { cgw_signal_disconnect(channel, id) }
        cgw_object_unref(channel)
    }

    /// The C object, for a call made with the lock released (GObject signals may call back).
    private var channel: UnsafeMutableRawPointer { state.withLock { $0.channel } }

    /// Connects the handlers (once; later calls are ignored). If the channel is already open,
    /// `opened` runs at once (a channel the peer opened is open when it is announced).
    public func setHandlers(_ handlers: Handlers) {
        let first: Bool = state.withLock { s in
            guard s.handlers == nil else { return false }
            s.handlers = handlers
            return true
        }
        guard first else { return }
        let channel = self.channel
        var ids: [UInt] = []
        ids.append(cgw_data_channel_on_open(channel, onChannelOpen, retainedBox(), releaseChannelBox))
        ids.append(cgw_data_channel_on_close(channel, onChannelClose, retainedBox(), releaseChannelBox))
        ids.append(cgw_data_channel_on_error(channel, onChannelError, retainedBox(), releaseChannelBox))
        ids.append(cgw_data_channel_on_text(channel, onChannelText, retainedBox(), releaseChannelBox))
        ids.append(cgw_data_channel_on_bytes(channel, onChannelBytes, retainedBox(), releaseChannelBox))
        state.withLock { $0.signalIds = ids }
        if isOpen { reportOpen() }
    }

    /// `opened` once, whether the signal or the check in `setHandlers` sees it first.
    fileprivate func reportOpen() {
        let handlers: Handlers? = state.withLock { s in
            guard !s.openReported else { return nil }
            s.openReported = true
            return s.handlers
        }
        handlers?.opened()
    }

    public var isOpen: Bool { cgw_data_channel_ready_state(channel) == Int32(CGW_DATA_CHANNEL_OPEN) }
    /// Bytes waiting to be sent.
    public var bufferedAmount: UInt64 { cgw_data_channel_buffered_amount(channel) }

    /// Sends a text message; false when the channel is not open.
    @discardableResult
    public func send(text: String) -> Bool { cgw_data_channel_send_text(channel, text) }

    /// Sends a binary message; false when the channel is not open.
    @discardableResult
    public func send(bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { cgw_data_channel_send_bytes(channel, $0.baseAddress, $0.count) }
    }

    public func close() { cgw_data_channel_close(channel) }

    fileprivate var currentHandlers: Handlers? { state.withLock { $0.handlers } }

    private func retainedBox() -> UnsafeMutableRawPointer {
        Unmanaged.passRetained(ChannelBox(self)).toOpaque()
    }
}

/// What C holds for a channel: a weak reference.
private final class ChannelBox: Sendable {
    weak let channel: WebRTCDataChannel?
    init(_ channel: WebRTCDataChannel) { self.channel = channel }
}

private func handlersFrom(_ context: UnsafeMutableRawPointer?) -> WebRTCDataChannel.Handlers? {
    guard let context else { return nil }
    return Unmanaged<ChannelBox>.fromOpaque(context).takeUnretainedValue().channel?.currentHandlers
}

private func releaseChannelBox(_ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    Unmanaged<ChannelBox>.fromOpaque(context).release()
}

private func onChannelOpen(_ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    Unmanaged<ChannelBox>.fromOpaque(context).takeUnretainedValue().channel?.reportOpen()
}
private func onChannelClose(_ context: UnsafeMutableRawPointer?) { handlersFrom(context)?.closed() }

private func onChannelError(_ context: UnsafeMutableRawPointer?, _ text: UnsafePointer<CChar>?) {
    handlersFrom(context)?.error(text.map { String(cString: $0) } ?? "")
}

private func onChannelText(_ context: UnsafeMutableRawPointer?, _ text: UnsafePointer<CChar>?) {
    handlersFrom(context)?.text(text.map { String(cString: $0) } ?? "")
}

private func onChannelBytes(_ context: UnsafeMutableRawPointer?, _ bytes: UnsafePointer<UInt8>?, _ length: Int) {
    guard let handlers = handlersFrom(context) else { return }
    handlers.bytes(UnsafeRawBufferPointer(start: bytes, count: bytes == nil ? 0 : length))
}

/// webrtcbin's on-data-channel (the peer opened one): the core wraps it and reports it.
func onPeerDataChannel(_ context: UnsafeMutableRawPointer?, _ channel: UnsafeMutableRawPointer?, _ label: UnsafePointer<CChar>?) {
    guard let channel else { return }
    let wrapped = WebRTCDataChannel(taking: channel, label: label.map { String(cString: $0) } ?? "")
    guard let context else { return }
    Unmanaged<DataChannelSink>.fromOpaque(context).takeUnretainedValue().report(wrapped)
}

func releaseDataChannelSink(_ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    Unmanaged<DataChannelSink>.fromOpaque(context).release()
}

/// Where a core sends the channels the peer opens.
final class DataChannelSink: Sendable {
    let report: @Sendable (WebRTCDataChannel) -> Void
    init(report: @escaping @Sendable (WebRTCDataChannel) -> Void) { self.report = report }
}
