import Foundation
import Testing
import TestSupport
@testable import WebRTCLink

/// Two real GStreamer peers in this process (the app simulator offers, the device answers), every
/// packet on loopback. Serialized: each test's pipelines must be gone before the next one.
@Suite(.serialized, .heavy)
struct LoopbackLinkTests {
    @Test func deviceVideoArrivesAtTheRequestedSizeWithAnAnswerThatFollowsProtocol() async throws {
        let harness = LinkHarness()
        defer { harness.closeAll() }
        let offer = try await harness.startOfferer()
        let media = SendMedia(video: VideoFormat(width: 640, height: 360, fps: 30))
        try await harness.startAnswerer(offer: offer, media: media)

        let enough = try await waitUntil(seconds: 20) { harness.framesReceivedByOfferer >= 60 }
        #expect(enough, "\(harness.diagnostics)")
        let frame = try #require(harness.lastFrame)
        #expect(frame.width == 640 && frame.height == 360)
        #expect(frame.stride >= 640 && frame.luma.count == frame.stride * frame.height)
        #expect(abs(frame.arrivalUnixNanos - GStreamerRuntime.unixTimeNanos()) < 10_000_000_000)
        #expect(harness.offererStates.contains(.connected))
        #expect(harness.answererStates.contains(.connected))

        // The answer: one bundled transport, rtcp-mux, H.264 packetization-mode 1, constrained
        // baseline, DTLS role passive (the device is the DTLS server: the offer said actpass),
        // PCMA at 8 kHz.
        let answer = try #require(harness.answer)
        #expect(answer.contains("a=group:BUNDLE"))
        #expect(answer.contains("a=rtcp-mux"))
        #expect(answer.contains("a=setup:passive") && !answer.contains("a=setup:active"))
        let summary = try SessionDescriptionSummary(parsing: answer)
        let video = try #require(summary.firstSection(kind: "video"))
        #expect(video.direction == .sendonly)
        let h264 = try #require(video.payloads.first { $0.encoding == "H264" })
        #expect(h264.packetizationMode == 1)
        let profile = try #require(h264.profileLevelID)
        #expect(profile.hasPrefix("42e0") || profile.hasPrefix("42c0") || profile.hasPrefix("4200"), "\(profile)")
        let audio = try #require(summary.firstSection(kind: "audio"))
        #expect(audio.payloads.map(\.encoding) == ["PCMA"])
        #expect(audio.payloads.first?.clockRate == 8000)

        // The device sent a key frame at start; the app received video and audio packets.
        let sent = try #require(harness.answerer?.stats)
        #expect(sent.videoKeyFramesSent >= 1)
        #expect(sent.videoFramesSent >= 60)
        let received = try #require(harness.offerer?.stats)
        #expect(received.videoPacketsReceived >= 60)
        #expect(received.audioPacketsReceived > 0)
        #expect(received.audioBuffersReceived > 0)
        #expect(received.rtpBytesReceived > 0)
        #expect(received.rtcpReportsReceived > 0)
        #expect(sent.rtcpReportsReceived > 0)
        #expect(harness.answererSentEndOfCandidates)
        let firstFrame = try #require(harness.answerToFirstFrame)
        print("[measure] answer -> first decoded frame at 640x360@30: \(firstFrame)")
        #expect(firstFrame < .seconds(5))
    }

    @Test func twoWayTheDeviceDecodesTheAppsVideoAndSnapshotsIt() async throws {
        let harness = LinkHarness()
        defer { harness.closeAll() }
        let appVideo = VideoFormat(width: 320, height: 240, fps: 15)
        // Unreachable-but-local STUN server: configuring one must not stop a host-candidate link.
        let options = LinkOptions(iceServers: [ICEServer(urls: ["stun:127.0.0.1:9"])], localAddresses: ["127.0.0.1"])
        let offer = try await harness.startOfferer(configuration: OfferConfiguration(sendsVideo: appVideo), options: options)
        let offerSummary = try SessionDescriptionSummary(parsing: offer)
        #expect(offerSummary.firstSection(kind: "video")?.direction == .sendrecv)
        try await harness.startAnswerer(offer: offer, media: SendMedia(video: VideoFormat(width: 320, height: 240, fps: 15)))
        let answerer = try #require(harness.answerer)
        #expect(answerer.plan.receivesVideo)

        let both = try await waitUntil(seconds: 20) {
            answerer.stats.videoFramesReceived >= 30 && harness.framesReceivedByOfferer >= 30
        }
        #expect(both, "\(harness.diagnostics)")
        #expect(answerer.stats.receivedVideoWidth == 320 && answerer.stats.receivedVideoHeight == 240)
        #expect(answerer.stats.videoPacketsReceived >= 30)
        let answerVideo = try SessionDescriptionSummary(parsing: try #require(harness.answer)).firstSection(kind: "video")
        #expect(answerVideo?.direction == .sendrecv)

        let jpeg = try answerer.snapshotJPEG()
        #expect(jpeg.count > 500)
        #expect(jpeg.prefix(2) == [0xFF, 0xD8])
        #expect(jpeg.suffix(2) == [0xFF, 0xD9])
    }

    @Test func aLinkWhosePeerVanishesIsReportedLostWithinSixSeconds() async throws {
        let harness = LinkHarness()
        defer { harness.closeAll() }
        let offer = try await harness.startOfferer()
        try await harness.startAnswerer(offer: offer, media: SendMedia(video: VideoFormat(width: 320, height: 240, fps: 15)))
        let flowing = try await waitUntil(seconds: 20) { harness.framesReceivedByOfferer >= 15 }
        #expect(flowing, "\(harness.diagnostics)")
        // Let a few RTCP reports of the receive-only app reach the device first.
        try await Task.sleep(for: .seconds(2))
        #expect(harness.answerer?.state == .connected)

        let vanished = ContinuousClock.now
        harness.offerer?.close()
        let lost = try await waitUntil(seconds: 10) {
            harness.answererState { if case .lost = $0 { return true } else { return false } } != nil
        }
        #expect(lost, "answerer states: \(harness.answererStates)")
        let lostAt = try #require(harness.answererState { if case .lost = $0 { return true } else { return false } })
        let delay = lostAt - vanished
        print("[measure] peer vanished -> lost after \(delay); states \(harness.answererStates)")
        #expect(delay < .milliseconds(6_500))
        // Not early either: 5 s of silence, minus at most the 1 s RTCP interval before the close.
        #expect(delay > .milliseconds(3_500))
        #expect(harness.offererStates.last == .closed)
    }

    @Test func opusIsSentWhenTheOfferHasNoPCMA() async throws {
        let harness = LinkHarness()
        defer { harness.closeAll() }
        let offer = try await harness.startOfferer(configuration: OfferConfiguration(audioCodecs: [.opus]))
        #expect(!offer.contains("PCMA"))
        try await harness.startAnswerer(offer: offer, media: SendMedia(video: VideoFormat(width: 320, height: 240, fps: 15)))
        #expect(harness.answerer?.plan.audioCodec == .opus)
        let audio = try SessionDescriptionSummary(parsing: try #require(harness.answer)).firstSection(kind: "audio")
        #expect(audio?.payloads.map(\.encoding) == ["OPUS"])
        let heard = try await waitUntil(seconds: 20) { (harness.offerer?.stats.audioBuffersReceived ?? 0) >= 10 }
        #expect(heard, "\(harness.diagnostics)")
    }

    @Test func pushedI420FramesAreEncodedAndArriveWithTheirContent() async throws {
        let harness = LinkHarness()
        defer { harness.closeAll() }
        let format = VideoFormat(width: 320, height: 240, fps: 30)
        let offer = try await harness.startOfferer()
        try await harness.startAnswerer(offer: offer, media: SendMedia(video: format, videoInput: .rawFrames))
        let answerer = try #require(harness.answerer)
        // Top half white, bottom half black, neutral chroma.
        var frame = [UInt8](repeating: 128, count: WebRTCAnswerer.i420Size(width: 320, height: 240))
        for row in 0..<240 { for column in 0..<320 { frame[row * 320 + column] = row < 120 ? 235 : 16 } }
        #expect(!answerer.pushVideoFrame([UInt8](repeating: 0, count: 10), width: 320, height: 240, ptsNanos: 0))
        #expect(!answerer.pushVideoFrame(frame, width: 640, height: 240, ptsNanos: 0))
        var pushed = 0
        var pts: Int64 = 5_000_000_000
        let deadline = ContinuousClock.now + .seconds(20)
        while harness.framesReceivedByOfferer < 30 && ContinuousClock.now < deadline {
            if answerer.pushVideoFrame(frame, width: 320, height: 240, ptsNanos: pts) { pushed += 1 }
            pts += 33_333_333
            try await Task.sleep(for: .milliseconds(33))
        }
        #expect(
            harness.framesReceivedByOfferer >= 30,
            "pushed \(pushed); \(harness.diagnostics)")
        let decoded = try #require(harness.lastFrame)
        #expect(decoded.width == 320 && decoded.height == 240)
        let top = decoded.luma[(60 * decoded.stride)..<(60 * decoded.stride + 320)].map(Int.init).reduce(0, +) / 320
        let bottom = decoded.luma[(180 * decoded.stride)..<(180 * decoded.stride + 320)].map(Int.init).reduce(0, +) / 320
        #expect(top > 200 && bottom < 50, "top \(top) bottom \(bottom)")
    }

    /// An app's offer and a device answering it with pushed access units (320x240@30).
    func startPassThroughLink(_ harness: LinkHarness) async throws -> WebRTCAnswerer {
        let offer = try await harness.startOfferer()
        try await harness.startAnswerer(
            offer: offer, media: SendMedia(video: VideoFormat(width: 320, height: 240, fps: 30), videoInput: .h264AccessUnits))
        return try #require(harness.answerer)
    }

    @Test func h264AccessUnitsPassThroughWithoutReencoding() async throws {
        let units = try await encodedAccessUnits(width: 320, height: 240, fps: 30, count: 90)
        #expect(units.count >= 60)
        let harness = LinkHarness()
        defer { harness.closeAll() }
        let answerer = try await startPassThroughLink(harness)
        #expect(answerer.encoderFactory == nil)
        var pts: Int64 = 0
        var index = 0
        let deadline = ContinuousClock.now + .seconds(20)
        while harness.framesReceivedByOfferer < 30 && ContinuousClock.now < deadline {
            let unit = units[index % units.count]
            answerer.pushH264AccessUnit(unit.bytes, ptsNanos: pts, isKeyFrame: unit.isKey)
            index += 1
            pts += 33_333_333
            try await Task.sleep(for: .milliseconds(33))
        }
        #expect(harness.framesReceivedByOfferer >= 30, "pushed \(index); \(harness.diagnostics)")
        #expect(harness.lastFrame?.width == 320)
        #expect(answerer.stats.videoKeyFramesSent >= 1)
    }

    /// Issue 24 item 5: pushed access units that come before the link connects (a fan-out's
    /// recent key frame) are held from their key frame on and sent when it connects: the app
    /// decodes from that key frame, though no other key frame ever comes.
    @Test func accessUnitsBeforeTheConnectionAreHeldFromTheirKeyFrame() async throws {
        let units = try await encodedAccessUnits(width: 320, height: 240, fps: 30, count: 30)
        #expect(units.first?.isKey == true)
        #expect(units.dropFirst().allSatisfy { !$0.isKey })
        let harness = LinkHarness()
        defer { harness.closeAll() }
        let answerer = try await startPassThroughLink(harness)
        #expect(answerer.state != .connected)
        for unit in units.prefix(4) { unit.bytes.withUnsafeBytes { _ = answerer.pushH264AccessUnit($0, isKeyFrame: unit.isKey) } }
        #expect(try await waitUntil(seconds: 10) { answerer.state == .connected })
        for unit in units.dropFirst(4) {
            unit.bytes.withUnsafeBytes { _ = answerer.pushH264AccessUnit($0, isKeyFrame: unit.isKey) }
            try await Task.sleep(for: .milliseconds(33))
        }
        #expect(try await waitUntil(seconds: 5) { harness.framesReceivedByOfferer >= 20 }, "\(harness.diagnostics)")
        #expect(answerer.stats.videoKeyFramesSent == 1)
    }

    @Test func everyKeyFrameRequestGetsAKeyFrame() async throws {
        let harness = LinkHarness()
        defer { harness.closeAll() }
        let offer = try await harness.startOfferer()
        // No periodic key frames: any after the first come from PLI/FIR.
        let media = SendMedia(video: VideoFormat(width: 320, height: 240, fps: 30), keyFrameIntervalSeconds: 1000)
        try await harness.startAnswerer(offer: offer, media: media)
        let answerer = try #require(harness.answerer)
        let offerer = try #require(harness.offerer)
        #expect(try await waitUntil(seconds: 20) { harness.framesReceivedByOfferer >= 30 })
        for round in 1...3 {
            let before = answerer.stats.videoKeyFramesSent
            #expect(offerer.requestKeyFrame())
            let got = try await waitUntil(seconds: 3) { answerer.stats.videoKeyFramesSent > before }
            #expect(got, "round \(round): key frames stayed at \(before)")
            try await Task.sleep(for: .milliseconds(600))
        }
    }

    @Test func theDeviceGathersHostCandidatesOnEveryInterfaceIncludingLoopback() async throws {
        // No remote candidates are given, so no connectivity check leaves this process.
        let harness = LinkHarness()
        defer { harness.closeAll() }
        let offer = try await harness.startOfferer()
        let log = EventLog()
        let answerer = try WebRTCAnswerer(
            offer: offer, media: SendMedia(video: VideoFormat(width: 320, height: 240, fps: 15)), options: LinkOptions(),
            events: LinkEvents(
                localDescription: { _ in log.append("answer") },
                localCandidate: { log.append($0.isEndOfCandidates ? "end" : $0.candidate) }))
        defer { answerer.close() }
        try answerer.start()
        #expect(try await waitUntil(seconds: 10) { log.entries.contains("end") })
        let entries = log.entries
        #expect(entries.first == "answer")
        let candidates = entries.filter { $0.hasPrefix("candidate:") }
        #expect(candidates.contains { $0.contains(" 127.0.0.1 ") }, "\(candidates)")
        for address in GStreamerRuntime.localInterfaceAddresses() where !address.contains(":") {
            #expect(candidates.contains { $0.contains(" \(address) ") }, "no candidate on \(address)")
        }
        #expect(entries.last == "end")
    }

    /// Reads the process-wide count of live pipelines, so no other heavy (media) test may run
    /// meanwhile (`swift test` runs tests in parallel).
    @Test(.heavy(exclusive: true)) func closingStopsEveryPipelineAndIsFinal() async throws {
        let harness = LinkHarness()
        let offer = try await harness.startOfferer()
        try await harness.startAnswerer(
            offer: offer, media: SendMedia(video: VideoFormat(width: 320, height: 240, fps: 15), videoInput: .rawFrames))
        #expect(try await waitUntil(seconds: 20) { harness.answerer?.state == .connected })
        #expect(GStreamerRuntime.runningPipelineCount >= 2)
        harness.closeAll()
        // Pipelines end on GStreamer's threads a moment after close: wait for the count.
        #expect(try await waitUntil(seconds: 30) { GStreamerRuntime.runningPipelineCount == 0 })
        #expect(harness.answererStates.last == .closed)
        #expect(harness.offererStates.last == .closed)
        let frame = [UInt8](repeating: 16, count: WebRTCAnswerer.i420Size(width: 320, height: 240))
        #expect(harness.answerer?.pushVideoFrame(frame, width: 320, height: 240, ptsNanos: 0) == false)
        harness.closeAll()  // idempotent
        #expect(harness.answererStates.filter { $0 == .closed }.count == 1)
    }

    @Test func aBadOfferIsRefusedBeforeAnyPipelineExists() {
        let events = LinkEvents(localDescription: { _ in }, localCandidate: { _ in })
        #expect(throws: WebRTCLinkError.self) {
            _ = try WebRTCAnswerer(offer: "not sdp", media: SendMedia(video: VideoFormat(width: 320, height: 240, fps: 15)), events: events)
        }
    }
}

final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func append(_ item: String) { lock.withLock { items.append(item) } }
    var entries: [String] { lock.withLock { items } }
}

struct AccessUnit: Sendable {
    var bytes: [UInt8]
    var isKey: Bool
}

/// Encodes a short clip with gst-launch-1.0 (x264, constrained baseline, byte-stream, one AUD per
/// access unit) and splits it at the access unit delimiters.
func encodedAccessUnits(width: Int, height: Int, fps: Int, count: Int) async throws -> [AccessUnit] {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("webrtclink-\(UUID().uuidString).h264")
    defer { try? FileManager.default.removeItem(at: file) }
    _ = try await runProgram("/usr/bin/gst-launch-1.0", [
        "-q", "videotestsrc", "num-buffers=\(count)", "pattern=ball", "!",
        "video/x-raw,format=I420,width=\(width),height=\(height),framerate=\(fps)/1", "!",
        "x264enc", "tune=zerolatency", "speed-preset=ultrafast", "key-int-max=\(fps)", "bframes=0", "aud=true", "!",
        "video/x-h264,profile=constrained-baseline,stream-format=byte-stream,alignment=au", "!",
        "filesink", "location=\(file.path)",
    ])
    let data = [UInt8](try Data(contentsOf: file))
    // Start codes of NAL type 9 (access unit delimiter).
    var starts: [Int] = []
    var i = 0
    while i + 4 < data.count {
        if data[i] == 0, data[i + 1] == 0, data[i + 2] == 0, data[i + 3] == 1, data[i + 4] & 0x1F == 9 { starts.append(i) }
        i += 1
    }
    var units: [AccessUnit] = []
    for (n, start) in starts.enumerated() {
        let end = n + 1 < starts.count ? starts[n + 1] : data.count
        let bytes = Array(data[start..<end])
        var key = false
        var j = 0
        while j + 3 < bytes.count {
            if bytes[j] == 0, bytes[j + 1] == 0, bytes[j + 2] == 1, bytes[j + 3] & 0x1F == 5 { key = true }
            j += 1
        }
        units.append(AccessUnit(bytes: bytes, isKey: key))
    }
    return units
}
