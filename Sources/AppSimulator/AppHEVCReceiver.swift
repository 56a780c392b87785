import Foundation
import IPCWire
import Synchronization
import WebRTCLink

/// The app's side of PROTOCOL.md 7: the `fmp4Stream` data channel it opened. Answers the device's
/// `codec` with `start` and its `recv` with `complete`, then puts the binary messages back into
/// segments, reads the fMP4, decodes the H.265 and hands every frame on (the stamp reader).
public final class AppHEVCReceiver: Sendable {
    /// What the receiver saw; it only grows.
    public struct Report: Sendable, Equatable {
        /// The device's text messages, in order, as they came.
        public var textsReceived: [String] = []
        /// What the app sent, in order.
        public var textsSent: [String] = []
        public var framing = FMP4Reassembler.Statistics()
        public var initializationSegments = 0
        public var mediaSegments = 0
        public var keyFrames = 0
        /// Sizes of the initialisation segments' sample entries, in order (a `resolution` switch
        /// adds one).
        public var initializationSizes: [String] = []
        /// Framing, fMP4 and handshake errors (the first 20 texts; `errors` counts all).
        public var errors = 0
        public var errorTexts: [String] = []
        public var framesDecoded = 0
        public var decoderError: String?

        /// One line for a terminal.
        public var summary: String {
            let handshake = (textsReceived + textsSent).isEmpty ? "no handshake" : "\(textsReceived.count) texts in, \(textsSent.count) out"
            var parts = [
                "fmp4Stream: \(handshake)", "init segments \(initializationSizes)", "\(mediaSegments) media segments (\(keyFrames) key)",
                "\(framing.messages) messages", "\(errors) errors",
            ]
            if let first = errorTexts.first { parts.append("first error: \(first)") }
            if let decoderError { parts.append("decoder: \(decoderError)") }
            return parts.joined(separator: ", ")
        }
    }

    /// Everything that changes, behind one Mutex; the channel and the decoder are called with it
    /// released.
    private struct State {
        var handshake = FMP4AppHandshake()
        var reassembler = FMP4Reassembler()
        var depacketizer = FMP4Depacketizer()
        var report = Report()
        var channel: WebRTCDataChannel?
    }
    private let state = Mutex(State())
    private let decoder: HEVCDecoder

    init(onFrame: @escaping @Sendable (DecodedVideoFrame) -> Void) {
        decoder = HEVCDecoder(onFrame: onFrame)
    }

    /// Takes the channel the offerer made (its handlers are set here).
    func attach(_ channel: WebRTCDataChannel) {
        guard channel.label == FMP4ControlMessage.channelLabel else { return }
        state.withLock { $0.channel = channel }
        do {
            try decoder.start()
        } catch {
            state.withLock { $0.report.decoderError = "\(error)" }
        }
        channel.setHandlers(.init(
            text: { [weak self] text in self?.received(text: text) },
            bytes: { [weak self] bytes in self?.received(bytes: Array(bytes)) },
            error: { [weak self] text in self?.failed("channel error: \(text)") }))
    }

    var snapshot: Report {
        let decoded = decoder.stats.framesOut
        let decoderError = decoder.error
        return state.withLock { s in
            var copy = s.report
            copy.framing = s.reassembler.stats
            copy.framesDecoded = decoded
            if copy.decoderError == nil { copy.decoderError = decoderError }
            return copy
        }
    }

    private func received(text: String) {
        let (effect, channel) = state.withLock { s -> (FMP4AppHandshake.Effect, WebRTCDataChannel?) in
            s.report.textsReceived.append(text)
            return (s.handshake.received(text), s.channel)
        }
        if let refusal = effect.refusal { failed(refusal) }
        for message in effect.send {
            let sent = channel?.send(text: message.text) ?? false
            state.withLock { $0.report.textsSent.append(message.text) }
            if !sent { failed("could not send \(message.text)") }
        }
    }

    private func received(bytes: [UInt8]) {
        let unit: (accessUnit: [UInt8], media: FMP4MediaSegment)? = state.withLock { s in
            guard s.handshake.state == .receiving else {
                s.report.note("a binary message before the handshake ended")
                return nil
            }
            do {
                guard let segment = try s.reassembler.accept(bytes) else { return nil }
                let isInit = segment.kind == .initialization
                let result = try s.depacketizer.take(segment.bytes, isInitialization: isInit)
                if isInit {
                    s.report.initializationSegments += 1
                    if let i = s.depacketizer.initialization {
                        s.report.initializationSizes.append("\(i.sampleEntry) \(i.width)x\(i.height)")
                    }
                } else {
                    s.report.mediaSegments += 1
                    if result?.media.isKeyFrame == true { s.report.keyFrames += 1 }
                }
                return result
            } catch {
                s.report.note("\(error)")
                return nil
            }
        }
        if let unit { decoder.push(unit.accessUnit, isKeyFrame: unit.media.isKeyFrame) }
    }

    private func failed(_ text: String) { state.withLock { $0.report.note(text) } }

    func close() {
        decoder.stop()
        state.withLock { $0.channel }?.close()
    }
}

extension AppHEVCReceiver.Report {
    /// Counts an error and keeps its text (the first 20).
    fileprivate mutating func note(_ text: String) {
        errors += 1
        if errorTexts.count < 20 { errorTexts.append(text) }
    }
}
