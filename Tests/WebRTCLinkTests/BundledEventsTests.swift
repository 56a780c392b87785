import Foundation
import Testing
import TestSupport
@testable import WebRTCLink

/// Issue 24 item 5: a pushed link's video and the shared tone meet in webrtcbin's bundle funnel,
/// which re-sends the segment and the custom sticky events of whichever pad sent last each time
/// the other one sends. With one segment for every pushed pad and webrtcbin's ToS events dropped
/// (`cgw_bundle_events.c`), nothing more leaves the funnel while both send; before, about two
/// events per switch did (15 switches a second with the tone's 7.8 packets a second).
@Suite(.serialized, .heavy)
struct BundledEventsTests {
    @Test func switchingBetweenTheToneAndTheVideoSendsNoEventsDownTheBundle() async throws {
        let units = try await encodedAccessUnits(width: 320, height: 240, fps: 30, count: 75)
        #expect(units.first?.isKey == true)
        let harness = LinkHarness()
        defer { harness.closeAll() }
        let offer = try await harness.startOfferer()
        try await harness.startAnswerer(
            offer: offer, media: SendMedia(video: VideoFormat(width: 320, height: 240, fps: 30), videoInput: .h264AccessUnits))
        let answerer = try #require(harness.answerer)
        let offerer = try #require(harness.offerer)
        for unit in units.prefix(3) { unit.bytes.withUnsafeBytes { _ = answerer.pushH264AccessUnit($0, isKeyFrame: unit.isKey) } }
        #expect(try await waitUntil(seconds: 10) { answerer.state == .connected })
        // The first packets of each pad carry their events once; count what comes after.
        #expect(try await waitUntil(seconds: 5) {
            harness.framesReceivedByOfferer >= 1 && offerer.stats.audioPacketsReceived >= 1
        }, "\(harness.diagnostics)")
        #expect(answerer.countBundledEvents())
        let audioBefore = offerer.stats.audioPacketsReceived
        let framesBefore = harness.framesReceivedByOfferer
        for unit in units.dropFirst(3) {
            unit.bytes.withUnsafeBytes { _ = answerer.pushH264AccessUnit($0, isKeyFrame: unit.isKey) }
            try await Task.sleep(for: .milliseconds(33))
        }
        let audio = offerer.stats.audioPacketsReceived - audioBefore
        let frames = harness.framesReceivedByOfferer - framesBefore
        // Both pads sent all along (so the funnel switched at least twice per tone packet) ...
        #expect(audio >= 8, "tone packets while counting: \(audio)")
        #expect(frames >= 40, "frames while counting: \(frames); \(harness.diagnostics)")
        // ... and no segment or custom event followed them down the bundle.
        let events = try #require(answerer.bundledEvents)
        #expect(events == 0, "events that left the funnel: \(events) over \(audio) tone packets and \(frames) frames")
    }
}
