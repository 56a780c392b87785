import AppSimulator
import Testing

/// What every HEVC stream passed through to `fmp4Stream` (PROTOCOL.md 7) must show, whatever its
/// source (an H.265 clip, an H.265 V4L2 camera): the tests add their own source's checks.
enum HEVCStreamCheck {
    /// Calls the harness's device as `user-alice`, takes its video as HEVC over `fmp4Stream` until
    /// `frames` are decoded, and checks: one 320x180 `hvc1` initialisation segment, no errors, no
    /// framing gaps or drops, at least `minimumKeyFrames` key frames, every segment decoded, every
    /// stamp read. Returns the app, the session, the video stats and the channel's report.
    static func passThroughCall(_ h: CallHarness, frames: Int, minimumKeyFrames: Int) async throws
        -> (AppUser, String, VideoStats, AppHEVCReceiver.Report) {
        let (alice, events) = try await h.app("user-alice")
        try await alice.startCall(devId: h.devId, timeoutSeconds: 10)
        #expect(await events.first { $0.receivedEvent(.answer) } != nil)
        let sid = try await alice.openVideo(hevc: true)
        let decoded = await EndToEnd.VideoCall.until(.seconds(25)) { (await alice.videoStats(sessionId: sid)?.framesDecoded ?? 0) >= frames }
        if !decoded {
            Issue.record("fewer than \(frames) frames decoded in 25 s:\n\(await h.videoDiagnosis(alice, sessionId: sid))")
        }
        let report = try #require(await alice.hevcReport(sessionId: sid))
        #expect(report.initializationSegments == 1 && report.initializationSizes == ["hvc1 320x180"])
        #expect(report.errors == 0, "\(report.errorTexts)")
        #expect(report.framing.segmentNumberGaps == 0 && report.framing.segmentsDropped == 0)
        #expect(report.keyFrames >= minimumKeyFrames && report.decoderError == nil)
        #expect(await EndToEnd.VideoCall.until(.seconds(3)) {
            let decoded = await alice.videoStats(sessionId: sid)?.framesDecoded ?? -1
            return await alice.hevcReport(sessionId: sid)?.mediaSegments == decoded
        })
        let stats = try #require(await alice.videoStats(sessionId: sid))
        #expect(stats.width == 320 && stats.height == 180)
        #expect(stats.stampErrors == 0, "\(stats.summary)")
        #expect(stats.stampsRead == stats.framesDecoded)
        let counters = stats.stamps.map { Int($0.counter) }
        #expect(counters.count == stats.framesDecoded)
        return (alice, sid, stats, report)
    }
}
