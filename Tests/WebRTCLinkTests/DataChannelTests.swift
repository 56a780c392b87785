import Foundation
import Testing
import TestSupport
import WebRTCLink

/// A data channel between two real webrtcbins (PROTOCOL.md 7 carries HEVC over one): the app's
/// offer has an m=application line, the device answers it, and text and binary messages of up to
/// 16 KiB go both ways, in order.
@Suite("WebRTC data channels", .serialized, .heavy)
struct DataChannelTests {
    final class Log: @unchecked Sendable {
        let lock = NSLock()
        var appChannel: WebRTCDataChannel?
        var deviceChannels: [WebRTCDataChannel] = []
        var appTexts: [String] = []
        var appBytes: [[UInt8]] = []
        var opened = false
    }

    @Test func textAndBinaryBothWaysOverAnOfferedChannel() async throws {
        let log = Log()
        let harness = LinkHarness()
        defer { harness.closeAll() }
        let offer = try await harness.startOfferer(
            configuration: OfferConfiguration(audioCodecs: [.pcma], receivesRTPVideo: false, dataChannels: ["fmp4Stream"]),
            dataChannel: { channel in
                log.lock.withLock { log.appChannel = channel }
                channel.setHandlers(.init(
                    opened: { log.lock.withLock { log.opened = true } },
                    text: { text in log.lock.withLock { log.appTexts.append(text) } },
                    bytes: { bytes in log.lock.withLock { log.appBytes.append(Array(bytes)) } }))
            })
        #expect(offer.contains("m=application") && offer.contains("webrtc-datachannel"))
        #expect(!offer.contains("m=video"))
        try await harness.startAnswerer(
            offer: offer, media: SendMedia(video: VideoFormat(width: 320, height: 240, fps: 15)),
            dataChannel: { channel in
                log.lock.withLock { log.deviceChannels.append(channel) }
                channel.setHandlers(.init(
                    opened: { _ = channel.send(text: "label \(channel.label)") },
                    text: { text in _ = channel.send(text: "echo \(text)") },
                    bytes: { bytes in _ = channel.send(bytes: Array(bytes)) }))
            })
        let answer = try #require(harness.answer)
        #expect(answer.contains("m=application") && answer.contains("webrtc-datachannel"), "\(answer)")
        #expect(try await waitUntil(seconds: 15) { log.lock.withLock { log.opened && !log.appTexts.isEmpty } }, "\(harness.diagnostics)")
        let channel = try #require(log.lock.withLock { log.appChannel })
        #expect(channel.send(text: #"{"type":"start","msg":"fmp4"}"#))
        let payloads = (0..<3).map { i in (0..<(16 * 1024)).map { UInt8(truncatingIfNeeded: $0 &+ i) } }
        for payload in payloads { #expect(channel.send(bytes: payload)) }
        #expect(try await waitUntil(seconds: 10) { log.lock.withLock { log.appBytes.count == 3 && log.appTexts.count == 2 } })
        log.lock.withLock {
            #expect(log.appTexts == ["label fmp4Stream", #"echo {"type":"start","msg":"fmp4"}"#])
            #expect(log.appBytes == payloads, "\(log.appBytes.map(\.count))")
            #expect(log.deviceChannels.map(\.label) == ["fmp4Stream"])
        }
    }
}
