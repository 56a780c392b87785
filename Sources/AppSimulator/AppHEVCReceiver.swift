import Foundation
import IPCWire
import WebRTCLink

/// The app's side of PROTOCOL.md 7: the `fmp4Stream` data channel it opened. Answers the device's
/// `codec` with `start` and its `recv` with `complete`, then puts the binary messages back into
/// segments, reads the fMP4, decodes the H.265 and hands every frame on (the stamp reader).
public final class AppHEVCReceiver: @unchecked Sendable {
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

    private let lock = NSLock()
    private var handshake = FMP4AppHandshake()
    private var reassembler = FMP4Reassembler()
    private var depacketizer = FMP4Depacketizer()
    private var report = Report()
    private var channel: WebRTCDataChannel?
    private let decoder: HEVCDecoder

    init(onFrame: @escaping @Sendable (DecodedVideoFrame) -> Void) {
        decoder = HEVCDecoder(onFrame: onFrame)
    }

    /// Takes the channel the offerer made (its handlers are set here).
    func attach(_ channel: WebRTCDataChannel) {
        guard channel.label == FMP4ControlMessage.channelLabel else { return }
        lock.withLock { self.channel = channel }
        do {
            try decoder.start()
        } catch {
            lock.withLock { report.decoderError = "\(error)" }
        }
        channel.setHandlers(.init(
            text: { [weak self] text in self?.received(text: text) },
            bytes: { [weak self] bytes in self?.received(bytes: Array(bytes)) },
            error: { [weak self] text in self?.failed("channel error: \(text)") }))
    }

    var snapshot: Report {
        let decoded = decoder.stats.framesOut
        let decoderError = decoder.error
        return lock.withLock {
            var copy = report
            copy.framing = reassembler.stats
            copy.framesDecoded = decoded
            if copy.decoderError == nil { copy.decoderError = decoderError }
            return copy
        }
    }

    private func received(text: String) {
        let (effect, channel) = lock.withLock { () -> (FMP4AppHandshake.Effect, WebRTCDataChannel?) in
            report.textsReceived.append(text)
            return (handshake.received(text), self.channel)
        }
        if let refusal = effect.refusal { failed(refusal) }
        for message in effect.send {
            let sent = channel?.send(text: message.text) ?? false
            lock.withLock { report.textsSent.append(message.text) }
            if !sent { failed("could not send \(message.text)") }
        }
    }

    private func received(bytes: [UInt8]) {
        let unit: (accessUnit: [UInt8], media: FMP4MediaSegment)? = lock.withLock {
            guard handshake.state == .receiving else {
                note("a binary message before the handshake ended")
                return nil
            }
            do {
                guard let segment = try reassembler.accept(bytes) else { return nil }
                let isInit = segment.kind == .initialization
                let result = try depacketizer.take(segment.bytes, isInitialization: isInit)
                if isInit {
                    report.initializationSegments += 1
                    if let i = depacketizer.initialization {
                        report.initializationSizes.append("\(i.sampleEntry) \(i.width)x\(i.height)")
                    }
                } else {
                    report.mediaSegments += 1
                    if result?.media.isKeyFrame == true { report.keyFrames += 1 }
                }
                return result
            } catch {
                note("\(error)")
                return nil
            }
        }
        if let unit { decoder.push(unit.accessUnit, isKeyFrame: unit.media.isKeyFrame) }
    }

    /// Under the lock.
    private func note(_ text: String) {
        report.errors += 1
        if report.errorTexts.count < 20 { report.errorTexts.append(text) }
    }

    private func failed(_ text: String) { lock.withLock { note(text) } }

    func close() {
        decoder.stop()
        lock.withLock { channel }?.close()
    }
}
