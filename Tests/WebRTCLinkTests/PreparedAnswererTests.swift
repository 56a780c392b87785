import Foundation
import Testing
import TestSupport
@testable import WebRTCLink

/// Issue 24 item 6: the device's pipeline built before its offer (`PreparedAnswerer`).
@Suite(.serialized, .heavy)
struct PreparedAnswererTests {
    /// Running link pipelines (the shared tone and encoders are not counted: they are made
    /// uncounted).
    static var pipelines: Int { GStreamerRuntime.runningPipelineCount }

    /// The count once the links of the tests before have wound down (these tests are exclusive, so
    /// none start meanwhile): a pipeline that stops while a test runs would otherwise move its
    /// baseline (seen: 0 >= 0 + 1 after the count was taken with one pipeline still stopping).
    static func settledBaseline() async throws -> Int {
        _ = try await waitUntil(seconds: 10) { pipelines == 0 }
        return pipelines
    }

    static let media = SendMedia(video: VideoFormat(width: 320, height: 240, fps: 30), videoInput: .h264AccessUnits)

    /// Pushes access units until the app decoded `frames`, or 20 s passed.
    private func stream(_ harness: LinkHarness, frames: Int) async throws {
        let units = try await encodedAccessUnits(width: 320, height: 240, fps: 30, count: 60)
        let answerer = try #require(harness.answerer)
        var pts: Int64 = 0
        var index = 0
        let deadline = ContinuousClock.now + .seconds(20)
        while harness.framesReceivedByOfferer < frames && ContinuousClock.now < deadline {
            let unit = units[index % units.count]
            answerer.pushH264AccessUnit(unit.bytes, ptsNanos: pts, isKeyFrame: unit.isKey)
            index += 1
            pts += 33_333_333
            try await Task.sleep(for: .milliseconds(33))
        }
    }

    @Test func anOfferThatFitsTakesThePreparedPipeline() async throws {
        var prepared: PreparedAnswerer? = try PreparedAnswerer(media: Self.media, options: LinkHarness.loopbackOnly)
        #expect(prepared?.isWaiting == true)
        let harness = LinkHarness()
        defer { harness.closeAll() }
        let offer = try await harness.startOfferer()
        try await harness.startAnswerer(offer: offer, media: Self.media, prepared: prepared)
        let answerer = try #require(harness.answerer)
        #expect(answerer.usesPrepared)
        #expect(prepared?.isWaiting == false)
        // Closing or dropping the prepared handle once taken leaves the link alone.
        prepared?.close()
        prepared = nil
        try await stream(harness, frames: 30)
        #expect(harness.framesReceivedByOfferer >= 30, "\(harness.diagnostics)")
        #expect(harness.offererStates.contains(.connected), "\(harness.diagnostics)")
        // The device's side came up (a loss later, on a starved machine, is not this test's subject).
        #expect(harness.answererStates.contains(.connected), "\(harness.diagnostics)")
    }

    // Exclusive: both read the process-wide pipeline count, which other link tests change.
    @Test(.heavy(exclusive: true)) func anOfferThatDoesNotFitGetsItsOwnPipelineAndThePreparedOneStops() async throws {
        let baseline = try await Self.settledBaseline()
        let prepared = try PreparedAnswerer(media: Self.media, options: LinkHarness.loopbackOnly)
        let harness = LinkHarness()
        defer { harness.closeAll() }
        // Payload type 102 for H.264: not what the prepared pipeline sends.
        let offer = try await harness.startOfferer(configuration: OfferConfiguration(videoPayloadType: 102))
        try await harness.startAnswerer(offer: offer, media: Self.media, prepared: prepared)
        let answerer = try #require(harness.answerer)
        #expect(!answerer.usesPrepared)
        #expect(!prepared.isWaiting)
        try await stream(harness, frames: 10)
        #expect(harness.framesReceivedByOfferer >= 10, "\(harness.diagnostics)")
        harness.closeAll()
        #expect(try await waitUntil(seconds: 10) { Self.pipelines <= baseline },
                "\(Self.pipelines) pipelines, \(baseline) before")
    }

    @Test(.heavy(exclusive: true)) func closedUnusedItStopsItsPipeline() async throws {
        let baseline = try await Self.settledBaseline()
        for _ in 0..<5 {
            let prepared = try PreparedAnswerer(media: Self.media, options: LinkHarness.loopbackOnly)
            #expect(Self.pipelines >= baseline + 1)
            prepared.close()
            #expect(!prepared.isWaiting)
        }
        #expect(try await waitUntil(seconds: 10) { Self.pipelines <= baseline },
                "\(Self.pipelines) pipelines, \(baseline) before")
    }
}
