import CallEngine
import IPCWire
import Testing

/// PROTOCOL.md 4 "Who may open a link", as the sans-IO machine decides it.
@Suite("P2P link rules")
struct P2PLinkRulesTests {
    let secrets = P2PLinkRules.DeviceSecrets(devId: "dev1", p2pPassword: "pw", localKey: "0123456789abcdef", liveView: false)
    var auth: String { P2PAuth.compute(p2pPassword: "pw", localKey: "0123456789abcdef", devId: "dev1") }

    @Test("An offer with the right auth for the answered session from the user who answered opens a link")
    func answeredCallOpens() {
        var rules = P2PLinkRules(device: secrets)
        #expect(rules.receiveOffer(sessionId: "s1", from: "alice", auth: auth, answeredCall: ("s1", "alice")) == .open(replacing: false))
        #expect(rules.accepts(sessionId: "s1", from: "alice"))
        #expect(!rules.accepts(sessionId: "s1", from: "bob"))
    }

    @Test("Wrong auth, another user, another session, no answered call: refused; nothing changes")
    func refusals() {
        var rules = P2PLinkRules(device: secrets)
        if case .refuse(let why) = rules.receiveOffer(sessionId: "s1", from: "alice", auth: "AAAA", answeredCall: ("s1", "alice")) {
            #expect(why == "wrong auth")
        } else { Issue.record("wrong auth accepted") }
        for (sid, from, answered) in [("s1", "bob", ("s1", "alice")), ("s2", "alice", ("s1", "alice"))] {
            guard case .refuse = rules.receiveOffer(sessionId: sid, from: from, auth: auth, answeredCall: answered) else {
                Issue.record("\(sid) from \(from) accepted"); continue
            }
        }
        guard case .refuse = rules.receiveOffer(sessionId: "s1", from: "alice", auth: auth, answeredCall: nil) else {
            Issue.record("no answered call, accepted"); return
        }
        #expect(rules.links.isEmpty)
    }

    @Test("Live view: any authorised offer opens; the owner's second offer replaces the link, another user's is refused")
    func liveViewAndReplace() {
        var live = secrets
        live.liveView = true
        var rules = P2PLinkRules(device: live)
        #expect(rules.receiveOffer(sessionId: "v", from: "alice", auth: auth, answeredCall: nil) == .open(replacing: false))
        guard case .refuse(let why) = rules.receiveOffer(sessionId: "v", from: "bob", auth: auth, answeredCall: nil) else {
            Issue.record("bob took over alice's link"); return
        }
        #expect(why.contains("another user"))
        #expect(rules.accepts(sessionId: "v", from: "alice"))
        #expect(!rules.accepts(sessionId: "v", from: "bob"))
        #expect(rules.receiveOffer(sessionId: "v", from: "alice", auth: auth, answeredCall: nil) == .open(replacing: true))
        #expect(rules.accepts(sessionId: "v", from: "alice"))
    }

    @Test("At most maxLinks links; a new session past the cap is refused, the owner may still replace")
    func linkCap() {
        var live = secrets
        live.liveView = true
        var rules = P2PLinkRules(device: live, maxLinks: 2)
        #expect(rules.receiveOffer(sessionId: "a", from: "u1", auth: auth, answeredCall: nil) == .open(replacing: false))
        #expect(rules.receiveOffer(sessionId: "b", from: "u2", auth: auth, answeredCall: nil) == .open(replacing: false))
        guard case .refuse = rules.receiveOffer(sessionId: "c", from: "u3", auth: auth, answeredCall: nil) else {
            Issue.record("a third link past the cap of 2 was accepted"); return
        }
        #expect(rules.receiveOffer(sessionId: "b", from: "u2", auth: auth, answeredCall: nil) == .open(replacing: true))
        #expect(rules.links.count == 2)
    }

    @Test("disconnect counts only from the link's peer; a closed link accepts nothing")
    func disconnect() {
        var rules = P2PLinkRules(device: secrets)
        _ = rules.receiveOffer(sessionId: "s1", from: "alice", auth: auth, answeredCall: ("s1", "alice"))
        let fromMallory = rules.receiveDisconnect(sessionId: "s1", from: "mallory")
        #expect(!fromMallory)
        #expect(rules.accepts(sessionId: "s1", from: "alice"))
        let fromAlice = rules.receiveDisconnect(sessionId: "s1", from: "alice")
        #expect(fromAlice)
        #expect(!rules.accepts(sessionId: "s1", from: "alice"))
    }

    @Test("App role: only the device the link was opened to, for that session, counts; an app never accepts offers")
    func appRole() {
        var rules = P2PLinkRules(app: ())
        rules.opened(sessionId: "s1", peer: "dev1")
        #expect(rules.accepts(sessionId: "s1", from: "dev1"))
        #expect(!rules.accepts(sessionId: "s1", from: "dev2"))
        #expect(!rules.accepts(sessionId: "s2", from: "dev1"))
        guard case .refuse = rules.receiveOffer(sessionId: "s1", from: "dev1", auth: auth, answeredCall: nil) else {
            Issue.record("app accepted an offer"); return
        }
        rules.closed(sessionId: "s1")
        #expect(!rules.accepts(sessionId: "s1", from: "dev1"))
    }
}
