import Camera
import Foundation
import Testing
import TestSupport
import WebRTCLink
@testable import Emulator

/// `VideoFeeds` counts each feed's users in its own Mutex-guarded state (not on the feed): many
/// links acquiring and releasing one camera at once share one capture and one feed, and the last
/// release stops both.
@Suite("VideoFeeds under concurrent acquire and release", .heavy)
struct VideoFeedsConcurrencyTests {
    static let camera = CameraConfig(kind: .testPattern, width: 320, height: 180, fps: 15)
    static let output = VideoFormat(width: 320, height: 180, fps: 15)

    @Test("16 tasks acquire one camera at once: one capture, one feed; all released, both stop; a stale release is ignored")
    func concurrentAcquireAndRelease() async throws {
        let feeds = VideoFeeds()
        feeds.linger = .zero
        let acquired = try await withThrowingTaskGroup(of: VideoFeeds.Feed.self) { group in
            for _ in 0..<16 { group.addTask { try feeds.acquire(camera: Self.camera, output: Self.output) } }
            return try await group.reduce(into: [VideoFeeds.Feed]()) { $0.append($1) }
        }
        #expect(acquired.count == 16)
        #expect(Set(acquired.map(ObjectIdentifier.init)).count == 1)
        #expect(feeds.counts.captures == 1)
        #expect(feeds.counts.feeds == 1)

        await withTaskGroup(of: Void.self) { group in
            for feed in acquired { group.addTask { feeds.release(feed) } }
        }
        #expect(await stopped(feeds), "the last release stops the feed and its capture")

        // A new user gets a new feed; releasing the old one again does not touch it.
        let fresh = try feeds.acquire(camera: Self.camera, output: Self.output)
        #expect(fresh !== acquired[0])
        if let stale = acquired.first { feeds.release(stale) }
        #expect(feeds.counts.feeds == 1)
        #expect(feeds.feeds(keyContaining: "320x180").first === fresh)
        feeds.release(fresh)
        #expect(await stopped(feeds))
    }

    /// Waits (up to 10 s) until no capture and no feed runs.
    private func stopped(_ feeds: VideoFeeds) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while feeds.counts.captures > 0 || feeds.counts.feeds > 0 {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }
}
