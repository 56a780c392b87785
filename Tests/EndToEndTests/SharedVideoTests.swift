import AppSimulator
import CallRuntime
import DeviceProfile
import Emulator
import Foundation
import IPCWire
import Testing
import WebRTCLink

extension EndToEnd {
    /// Issue 11 with real media: one camera, one encoder per stream size, shared by every link;
    /// limits that protect the call.
    @Suite("Shared video feeds and live-view limits (issue 11)")
    struct SharedVideo {
        static func liveViewVideo(_ p: inout DeviceProfile) {
            VideoCall.smallVideo(&p)
            p.capabilities.liveView = true
        }

        @Test("a call and a live view of one device get the same frames: same counters with the same capture times",
              .timeLimit(.minutes(8)))
        func twoLinksShareFrames() async throws {
            try await withHarness(edit: Self.liveViewVideo) { h in
                let (alice, events) = try await h.app("user-alice")
                try await alice.startCall(devId: h.devId, timeoutSeconds: 10)
                #expect(await events.first { $0.receivedEvent(.answer) } != nil)
                let call = try await alice.openVideo()
                let (bob, _) = try await h.app("user-bob")
                // Bob joins a little later: his link starts at a key frame of the shared stream.
                #expect(await VideoCall.until(.seconds(20)) { (await alice.videoStats(sessionId: call)?.framesDecoded ?? 0) >= 10 })
                let live = try await bob.openVideo(sessionId: "live-bob", devId: h.devId)
                #expect(await VideoCall.until(.seconds(20)) {
                    let bobFrames = await bob.videoStats(sessionId: live)?.framesDecoded ?? 0
                    let aliceFrames = await alice.videoStats(sessionId: call)?.framesDecoded ?? 0
                    return bobFrames >= 30 && aliceFrames >= 60
                })
                let a = try #require(await alice.videoStats(sessionId: call))
                let b = try #require(await bob.videoStats(sessionId: live))
                #expect(a.stampErrors == 0 && b.stampErrors == 0, "\(a.summary) / \(b.summary)")
                // The late joiner's very first frame decoded whole (it began at a key frame).
                #expect(b.stampsRead == b.framesDecoded)
                let common = Set(a.stamps).intersection(b.stamps)
                #expect(common.count >= 20, "only \(common.count) frames in common")
                // One source: a counter means one capture time on both links.
                let aTimes = Dictionary(a.stamps.map { ($0.counter, $0.captureUnixMs) }, uniquingKeysWith: { x, _ in x })
                let mismatched = b.stamps.filter { s in aTimes[s.counter].map { $0 != s.captureUnixMs } ?? false }
                #expect(mismatched.isEmpty, "\(mismatched.prefix(5))")
                #expect(await h.device.mediaLinks.count == 2)
                try await alice.hangUp()
            }
        }

        @Test("the live-view limit refuses the next viewer with disconnect (close_reason 2) and leaves the call untouched",
              .timeLimit(.minutes(8)))
        func liveViewLimit() async throws {
            try await withHarness(edit: {
                Self.liveViewVideo(&$0)
                $0.capabilities.liveViewLimit = 1
            }) { h in
                let (bob, _) = try await h.app("user-bob")
                let (carol, _) = try await h.app("user-carol")
                let (alice, events) = try await h.app("user-alice")
                let bobLive = try await bob.openVideo(sessionId: "live-bob", devId: h.devId)
                #expect(await VideoCall.until(.seconds(20)) { (await bob.videoStats(sessionId: bobLive)?.framesDecoded ?? 0) >= 5 })
                try await carol.openVideo(sessionId: "live-carol", devId: h.devId)
                #expect(await VideoCall.until(.seconds(5)) { await carol.disconnectReason(sessionId: "live-carol") == 2 })
                #expect((await carol.videoStats(sessionId: "live-carol")?.framesDecoded ?? 0) == 0)

                // A call at the limit: its link never counts against live view.
                try await alice.startCall(devId: h.devId, timeoutSeconds: 10)
                #expect(await events.first { $0.receivedEvent(.answer) } != nil)
                let call = try await alice.openVideo()
                #expect(await VideoCall.until(.seconds(20)) { (await alice.videoStats(sessionId: call)?.framesDecoded ?? 0) >= 20 })
                // Carol again, now with a call up: still refused, and the call streams on.
                try await carol.openVideo(sessionId: "live-carol-2", devId: h.devId)
                #expect(await VideoCall.until(.seconds(5)) { await carol.disconnectReason(sessionId: "live-carol-2") == 2 })
                let before = try #require(await alice.videoStats(sessionId: call)).framesDecoded
                #expect(await VideoCall.until(.seconds(5)) { (await alice.videoStats(sessionId: call)?.framesDecoded ?? 0) >= before + 15 })
                #expect(await h.device.status.phase == .answered)
                #expect(await h.device.mediaLinks.count == 2)
                try await alice.hangUp()
            }
        }

        @Test("a link that never connects is reaped after connectTimeout and the app gets disconnect",
              .timeLimit(.minutes(8)))
        func neverConnectingLinkIsReaped() async throws {
            try await withHarness(edit: {
                Self.liveViewVideo(&$0)
                $0.timers.connectTimeout = 2
            }) { h in
                let (bob, bobEvents) = try await h.app("user-bob")
                // A real offer whose peer is gone before the answer: nothing will ever connect.
                let sdp = try await Self.orphanOffer()
                let auth = P2PAuth.compute(p2pPassword: h.profile.identity.p2pPassword, localKey: h.profile.identity.localKey,
                                           devId: h.devId)
                let offer = SignalMessage(header: SignalHeader(from: "user-bob", to: h.devId, sessionId: "orphan"),
                                          body: .offer(SignalOffer(sdp: sdp, streamType: .main, auth: auth)))
                let sentAt = ContinuousClock.now
                try await bob.send(offer.envelope(t: WallClock.nowSeconds()), to: h.devId)
                #expect(await VideoCall.until(.seconds(3)) { await h.device.mediaLinks["orphan"] != nil })
                // The app has no link of its own for it, so look at what came on the wire.
                let reason = await bobEvents.first(within: .seconds(6)) { e -> Int64? in
                    if case .signal(let s, _) = e, s.header.sessionId == "orphan", case .disconnect(let d) = s.body {
                        d.closeReason
                    } else {
                        nil
                    }
                }
                #expect(reason == 0)
                let took = ContinuousClock.now - sentAt
                #expect(took >= .seconds(2) && took < .seconds(5), "reaped after \(took)")
                #expect(await h.device.mediaLinks["orphan"] == nil)
            }
        }

        /// An offer SDP from a webrtcbin that is closed right after making it.
        static func orphanOffer() async throws -> String {
            let (stream, continuation) = AsyncStream<String>.makeStream()
            let offerer = WebRTCOfferer(events: LinkEvents(
                localDescription: { continuation.yield($0) }, localCandidate: { _ in }))
            try offerer.start()
            var iterator = stream.makeAsyncIterator()
            let sdp = await iterator.next()
            offerer.close()
            return try #require(sdp)
        }
    }
}
