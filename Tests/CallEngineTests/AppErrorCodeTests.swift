import Testing
import IPCWire
@testable import CallEngine

/// PROTOCOL.md 3.5: every ended call reports its SDK error code (app side).
@Suite("App: SDK error codes (3.5)")
struct AppErrorCodeTests {
    private func callingApp() -> AppCallEngine {
        var a = appEngine()
        _ = try? a.perform(.startCall(StartCall(targetId: dev, sessionId: "a1")), now: t0)
        return a
    }

    @Test("a peer's ending event maps to its SDK code, and the app does not reply", arguments: [
        (CallEvent.reject, -2510, CallOutcome.rejected),
        (.busy, -2511, .busy),
        (.notAnswered, -2512, .notAnswered),
        (.hangUp, -2513, .hungUp),
        (.cancel, -2523, .cancelled),
        (.alreadyAnswered, -2522, .answeredElsewhere),
        (.alreadyRejected, -2521, .rejectedElsewhere),
    ])
    func endingEvents(event: CallEvent, code: Int, outcome: CallOutcome) {
        var a = callingApp()
        let effects = a.receive(msg(event, dev, u1, "a1"), now: t0 + 1000)
        #expect(sent(effects).isEmpty)
        #expect(endedRecord(effects)?.sdkError?.rawValue == code)
        #expect(endedRecord(effects)?.outcome == outcome)
        #expect(endedRecord(effects)?.endedBy == .remote)
        #expect(!a.isOnCalling)
    }

    @Test("a stop maps by its reason", arguments: [
        ("invalid_params", -2500), ("undefined_session", -2508), ("heartbeat_timeout", -2532),
        ("disconnected", -2532), ("connect_failed", -2531), ("expired", -2530), ("timeout", -2530),
        ("shutdown", -2533), ("busy", -2533), ("something_else", -2533),
    ])
    func stopReasons(reason: String, code: Int) {
        var a = callingApp()
        let m = CallMessage(event: .stop, curId: dev, targetId: u1, sessionId: "a1", reason: reason)
        let effects = a.receive(m, now: t0 + 1000)
        #expect(sent(effects).isEmpty)
        #expect(endedRecord(effects)?.sdkError?.rawValue == code)
        #expect(endedRecord(effects)?.remoteReason == reason)
    }

    @Test("a stop with no reason is a remote stop (-2533)")
    func stopWithoutReason() {
        var a = callingApp()
        #expect(endedRecord(a.receive(msg(.stop, dev, u1, "a1"), now: t0 + 5))?.sdkError == .remoteStop)
    }

    @Test("the device hanging up an answered call: -2513")
    func peerHangUpAfterAnswer() {
        var a = callingApp()
        _ = a.receive(msg(.answer, dev, u1, "a1"), now: t0 + 1000)
        let effects = a.receive(msg(.hangUp, dev, u1, "a1", reason: .shutdown), now: t0 + 9000)
        #expect(endedRecord(effects)?.sdkError == .peerHungUp)
        #expect(endedRecord(effects)?.reason == .shutdown)
        #expect(withoutRecord(effects).contains(.closeMediaLink(sessionId: "a1")))
    }

    @Test("the mapping function itself")
    func mappingTable() {
        #expect(SDKError.forPeerEnding(.ring, reason: nil) == nil)
        #expect(SDKError.forPeerEnding(.heartbeat, reason: nil) == nil)
        #expect(SDKError.forPeerEnding(.stop, reason: "connect_failed") == .connectFailed)
        #expect(SDKError.forStop(reason: nil) == .remoteStop)
    }
}
