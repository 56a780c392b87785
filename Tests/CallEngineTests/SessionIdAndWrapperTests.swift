import Testing
import IPCWire
@testable import CallEngine

@Suite("Session ids and the role-agnostic wrapper")
struct SessionIdAndWrapperTests {
    @Test("a device-made session id is devId + 6 characters of [0-9A-Za-z]")
    func sessionIdShape() {
        var rng = SplitMix64(state: 42)
        var seen = Set<String>()
        for _ in 0..<1000 {
            let id = makeSessionId(devId: "6c1e0f7a9b", using: &rng)
            #expect(id.hasPrefix("6c1e0f7a9b"))
            let suffix = id.dropFirst("6c1e0f7a9b".count)
            #expect(suffix.count == 6)
            #expect(suffix.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) })
            seen.insert(id)
        }
        #expect(seen.count == 1000)
    }

    @Test("session ids are reproducible from the generator (no hidden randomness)")
    func sessionIdDeterministic() {
        var a = SplitMix64(state: 7)
        var b = SplitMix64(state: 7)
        #expect(makeSessionId(devId: dev, using: &a) == makeSessionId(devId: dev, using: &b))
    }

    @Test("the random characters cover the whole alphabet")
    func alphabetCovered() {
        var rng = SplitMix64(state: 1)
        var chars = Set<Character>()
        for _ in 0..<2000 { chars.formUnion(makeSessionId(devId: "", using: &rng)) }
        #expect(chars == Set(sessionIdAlphabet))
        #expect(sessionIdAlphabet.count == 62)
    }

    @Test("CallEngine wraps either role behind the same input/effect vocabulary")
    func wrapper() throws {
        var device = CallEngine(device: DeviceEngineConfig(devId: dev, answerPolicy: .answerAfter(ms: 0)))
        var app = CallEngine(app: AppEngineConfig(userId: u1))
        #expect(device.localId == dev)
        #expect(app.localId == u1)
        let callEffects = try app.perform(.startCall(StartCall(targetId: dev, sessionId: "w1")), now: t0)
        var toApp: [CallMessage] = []
        for m in sent(callEffects) { toApp += sent(device.handle(.received(m), now: t0 + 5)) }
        #expect(toApp.map(\.event) == [.ring, .answer])
        for m in toApp { _ = app.handle(.received(m), now: t0 + 10) }
        #expect(app.phase == .answered)
        #expect(device.answeredCall == AnsweredCall(sessionId: "w1", peer: u1))
        #expect(app.answeredCall == AnsweredCall(sessionId: "w1", peer: dev))
        #expect(device.session?.answeredBy == dev)
        #expect(device.handle(.local(.startCall(StartCall(targetId: dev, sessionId: "x"))), now: t0) ==
                [.actionRefused(.startCall(StartCall(targetId: dev, sessionId: "x")),
                                .notInThisRole(action: "startCall", role: .device))])
    }
}
