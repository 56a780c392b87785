import CallEngine
import IPCWire
import Testing

/// PROTOCOL.md 4 on the device, as `P2PLinkRules` decides it (issue 23: these rules lived inside
/// the `Device` actor): the live-view limits (issue 11), who may steer a link (`resolution`, 8.6's
/// 312: "accepted only from the user whose offer made the link"), and the reaper of a link that
/// never comes up (issues 10 and 11).
@Suite("P2P link lifecycle rules (device)")
struct P2PLinkLifecycleTests {
    let secrets = P2PLinkRules.DeviceSecrets(devId: "dev1", p2pPassword: "pw", localKey: "0123456789abcdef", liveView: true)
    var auth: String { P2PAuth.compute(p2pPassword: "pw", localKey: "0123456789abcdef", devId: "dev1") }

    @Test("PROTOCOL.md 4: the answered call's link is not live view and is reaped at the connect timeout after its offer")
    func callLink() {
        var rules = P2PLinkRules(device: secrets, liveViewLimit: 0, connectTimeoutMs: 20_000)
        let verdict = rules.admitOffer(sessionId: "s1", from: "alice", auth: auth, answeredCall: ("s1", "alice"), nowMs: 1_000,
                                       processHasLiveViewRoom: false)
        guard case .open(let replacing, let liveView, _, let reapAtMs) = verdict else {
            Issue.record("the call's link was refused: \(verdict)"); return
        }
        #expect(!replacing)
        #expect(!liveView)  // never refused for live view's sake, whatever the limits
        #expect(reapAtMs == 21_000)
        #expect(rules.liveViewCount == 0)
    }

    @Test("issue 11: past the profile's live-view limit, the next watcher gets unavailable (2); the existing links stay")
    func liveViewLimit() {
        var rules = P2PLinkRules(device: secrets, liveViewLimit: 2)
        for (sid, user) in [("v1", "u1"), ("v2", "u2")] {
            guard case .open(_, true, _, _) = rules.admitOffer(sessionId: sid, from: user, auth: auth, answeredCall: nil, nowMs: 0) else {
                Issue.record("watcher \(user) refused"); return
            }
        }
        let third = rules.admitOffer(sessionId: "v3", from: "u3", auth: auth, answeredCall: nil, nowMs: 0)
        #expect(third == .refuse(why: "2 live-view links open, the profile allows 2", closeReason: SignalDisconnect.unavailable))
        #expect(rules.links.count == 2)
        // A watcher reconnecting replaces its own link: not a new one.
        guard case .open(true, true, _, _) = rules.admitOffer(sessionId: "v2", from: "u2", auth: auth, answeredCall: nil, nowMs: 0) else {
            Issue.record("a watcher could not replace its own link at the limit"); return
        }
        rules.closed(sessionId: "v1")
        guard case .open(false, true, _, _) = rules.admitOffer(sessionId: "v3", from: "u3", auth: auth, answeredCall: nil, nowMs: 0) else {
            Issue.record("a slot freed, but the watcher was refused"); return
        }
    }

    @Test("issue 11: with the process's live-view slots full, a new watcher gets unavailable; the call's link and a reconnecting watcher do not")
    func processLimit() {
        var rules = P2PLinkRules(device: secrets)
        guard case .open = rules.admitOffer(sessionId: "v1", from: "u1", auth: auth, answeredCall: nil, nowMs: 0) else {
            Issue.record("first watcher refused"); return
        }
        guard case .refuse(_, SignalDisconnect.unavailable) = rules.admitOffer(
            sessionId: "v2", from: "u2", auth: auth, answeredCall: nil, nowMs: 0, processHasLiveViewRoom: false) else {
            Issue.record("a new watcher took a slot the process does not have"); return
        }
        guard case .open(true, true, _, _) = rules.admitOffer(
            sessionId: "v1", from: "u1", auth: auth, answeredCall: nil, nowMs: 0, processHasLiveViewRoom: false) else {
            Issue.record("a watcher replacing its own link needs no new slot"); return
        }
        guard case .open(false, false, _, _) = rules.admitOffer(
            sessionId: "s1", from: "alice", auth: auth, answeredCall: ("s1", "alice"), nowMs: 0, processHasLiveViewRoom: false) else {
            Issue.record("the call's link was refused for live view's sake"); return
        }
    }

    @Test("PROTOCOL.md 4: an unauthorised offer is refused with close_reason 1 before any limit applies")
    func unauthorisedFirst() {
        var rules = P2PLinkRules(device: secrets, liveViewLimit: 0)
        #expect(rules.admitOffer(sessionId: "v", from: "u", auth: "AAAA", answeredCall: nil, nowMs: 0)
            == .refuse(why: "wrong auth", closeReason: SignalDisconnect.unauthorised))
    }

    @Test("issues 10, 11: a link not up by its deadline is reaped once; one that came up, or was replaced, is not")
    func reaper() {
        var rules = P2PLinkRules(device: secrets, connectTimeoutMs: 5_000)
        guard case .open(_, _, let first, _) = rules.admitOffer(sessionId: "v", from: "u", auth: auth, answeredCall: nil, nowMs: 0),
              case .open(true, _, let second, _) = rules.admitOffer(sessionId: "v", from: "u", auth: auth, answeredCall: nil, nowMs: 1) else {
            Issue.record("offers refused"); return
        }
        #expect(first != second)
        #expect(rules.connectTimeoutFired(sessionId: "v", generation: first) == nil)  // replaced: stale
        #expect(rules.accepts(sessionId: "v", from: "u"))
        #expect(rules.connectTimeoutFired(sessionId: "v", generation: second) == P2PLinkRules.ReapedLink(liveView: true))
        #expect(rules.links.isEmpty)
        #expect(rules.connectTimeoutFired(sessionId: "v", generation: second) == nil)  // once

        guard case .open(_, _, let third, _) = rules.admitOffer(sessionId: "s", from: "alice", auth: auth,
                                                                answeredCall: ("s", "alice"), nowMs: 0) else {
            Issue.record("call link refused"); return
        }
        rules.linkUp(sessionId: "s", generation: third)
        #expect(rules.details["s"]?.up == true)
        #expect(rules.connectTimeoutFired(sessionId: "s", generation: third) == nil)
    }

    @Test("the connect timeout is kept within 1 s ... 1 h")
    func timeoutBounds() {
        #expect(P2PLinkRules(device: secrets, connectTimeoutMs: 0).connectTimeoutMs == 1_000)
        #expect(P2PLinkRules(device: secrets, connectTimeoutMs: .max).connectTimeoutMs == 3_600_000)
    }

    @Test("PROTOCOL.md 4 resolution and 8.6: only the user whose offer made the link may steer it")
    func control() {
        var rules = P2PLinkRules(device: secrets)
        #expect(rules.control(sessionId: "v", from: "u1") == .noLink)
        _ = rules.admitOffer(sessionId: "v", from: "u1", auth: auth, answeredCall: nil, nowMs: 0)
        #expect(rules.control(sessionId: "v", from: "u1") == .owner)
        #expect(rules.control(sessionId: "v", from: "mallory") == .notOwner(owner: "u1"))
        _ = rules.receiveDisconnect(sessionId: "v", from: "u1")
        #expect(rules.control(sessionId: "v", from: "u1") == .noLink)
    }
}
