import AppSimulator
import CallEngine
import DeviceProfile
@testable import Emulator
import Foundation
import IPCWire
import MQTTTransport
import Testing
import TestSupport

/// Issue 24 item 5, DESIGN.md "Scale": devices of a fleet whose profiles have one camera
/// configuration share one capture and one encoder in the process, fanned out to every device's
/// link; each stream still starts at a key frame and its stamp counter (PROTOCOL.md 6) has no gaps.
/// Real mosquitto, real webrtcbin on both sides; a small stream size no other test uses, so the
/// feed looked up here is this test's even when other suites stream at the same time.
@Suite("Fleet video: one encoder per camera configuration", .serialized, .timeLimit(.minutes(8)), .heavy)
struct FleetSharedVideoTests {
    static let size = DeviceProfile.StreamFormat(width: 352, height: 200, fps: 15)

    @Test("two fleet devices in calls stream one shared encoder's access units; each stream's counter has no gaps")
    func devicesShareOneEncoder() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        var door = try doorbellTemplate(prefix: "fvid")
        door.behaviour.answerPolicy = .answer(afterSeconds: 0)
        door.capabilities.video?.main = Self.size
        // A loaded machine must not end the calls before the video is up.
        door.timers = DeviceProfile.Timers(heartbeatInterval: 1, heartbeatTimeout: 60, connectTimeout: 60)
        let plan = try FleetPlan(groups: [.init(profile: door, count: 2)])
        let fleet = try Fleet(plan: plan, positions: 0..<plan.total,
                              options: Fleet.Options(connection: broker.clientOptions(clientID: "fleet")))
        let report = await fleet.start()
        #expect(report.online == 2, "\(report)")

        var calls: [(app: AppUser, session: String)] = []
        for position in 0..<plan.total {
            let p = try plan.profile(at: position)
            let app = try AppUser(userId: "viewer-\(position)", connection: broker.clientOptions(clientID: "viewer-\(position)"),
                                  config: AppEngineConfig(userId: "viewer-\(position)", heartbeatIntervalMs: 1000))
            try await app.start(timeout: .seconds(30))
            try await app.add(DeviceAddress(devId: p.identity.devId, localKey: p.identity.localKey,
                                            p2pPassword: p.identity.p2pPassword))
            let events = await app.events()
            let session = try await app.startCall(devId: p.identity.devId)
            var answered = false
            for await event in events {
                if case .received(let m, _) = event, m.event == .answer { answered = true; break }
                if case .callEnded = event { break }
            }
            try #require(answered, "device \(p.identity.devId) did not answer")
            try await app.openVideo(sessionId: session)
            calls.append((app, session))
        }

        for call in calls {
            #expect(await framesDecoded(call.app, call.session, atLeast: 30))
        }
        // One feed for both devices' links, subscribed twice, each unit delivered to both.
        let feeds = VideoFeeds.shared.feeds(keyContaining: "\(Self.size.width)x\(Self.size.height)")
        #expect(feeds.count == 1, "feeds: \(feeds.map(\.key))")
        let fanOut = try #require(feeds.first?.fanOut)
        #expect(fanOut.subscriberCount == 2)
        let fan = fanOut.stats
        #expect(fan.deliveries > fan.accessUnits, "both links got units: \(fan)")

        var stampSets: [Set<VideoStats.Stamp>] = []
        for call in calls {
            let stats = try #require(await call.app.videoStats(sessionId: call.session))
            #expect(stats.width == Self.size.width && stats.height == Self.size.height)
            #expect(stats.stampsRead >= 30)
            #expect(stats.stampErrors == 0)
            #expect(stats.framesDropped == 0, "counter gaps in one stream: \(stats.summary)")
            stampSets.append(Set(stats.stamps))
        }
        // The same captured frames (counter and capture time) reached both devices' callers.
        let common = stampSets[0].intersection(stampSets[1])
        #expect(common.count >= 10, "stamps both streams decoded: \(common.count)")

        for call in calls {
            try? await call.app.hangUp()
            await call.app.stop()
        }
        await fleet.stop()
    }
}

/// Waits (up to 30 s) until the app has decoded `count` frames on the session's link.
private func framesDecoded(_ app: AppUser, _ session: String, atLeast count: Int) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(30)
    while ContinuousClock.now < deadline {
        if let stats = await app.videoStats(sessionId: session), stats.framesDecoded >= count { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return false
}
