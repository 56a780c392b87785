import Dispatch
import Synchronization
import Testing
import TestSupport
@testable import WebRTCLink

/// `cf5738a` (docs/webrtc.md, "ICE"): a link hands its description to the peer only once webrtcbin
/// has taken it as its local description. The race it closed needed a peer's answer to arrive
/// between creating the offer and queueing `set-local-description`; here the app applies the
/// device's answer from inside its own offer's callback, which is that case every time: with the
/// description sent before it was set, webrtcbin refuses the answer (state stable) and the link
/// never connects.
@Suite(.heavy)
struct SignallingOrderTests {
    static let media = SendMedia(video: VideoFormat(width: 320, height: 240, fps: 30), videoInput: .h264AccessUnits)

    /// The two links of one test and what they reported.
    final class Pair: Sendable {
        struct State {
            var offerer: WebRTCOfferer?
            var answerer: WebRTCAnswerer?
            var answer: String?
            var answerProblem: String?
            var offererStates: [LinkState] = []
            var answererStates: [LinkState] = []
            /// Events of the offerer in the order they came: "description" or "candidate".
            var offererEvents: [String] = []
            var toAnswerer: [ICECandidate] = []
        }

        let state = Mutex(State())
        let answered = DispatchSemaphore(value: 0)

        /// The offerer's description: build the device's answerer on it, wait (on this GStreamer
        /// thread, never the cooperative pool) for its answer and apply it before returning.
        func offerReady(_ sdp: String) {
            state.withLock { $0.offererEvents.append("description") }
            let answererEvents = LinkEvents(
                localDescription: { [self] answer in
                    state.withLock { $0.answer = answer }
                    answered.signal()
                },
                localCandidate: { [self] candidate in
                    let offerer = state.withLock { $0.offerer }
                    offerer?.addRemoteCandidate(candidate.attributeLine, sdpMLineIndex: candidate.sdpMLineIndex)
                },
                stateChanged: { [self] s in state.withLock { $0.answererStates.append(s) } })
            do {
                let answerer = try WebRTCAnswerer(offer: sdp, media: SignallingOrderTests.media, options: LinkHarness.loopbackOnly, events: answererEvents)
                let early: [ICECandidate] = state.withLock { s in
                    s.answerer = answerer
                    defer { s.toAnswerer = [] }
                    return s.toAnswerer
                }
                try answerer.start()
                for c in early { answerer.addRemoteCandidate(c.attributeLine, sdpMLineIndex: c.sdpMLineIndex) }
                guard answered.wait(timeout: .now() + 10) == .success, let answer = state.withLock({ $0.answer }) else {
                    state.withLock { $0.answerProblem = "no answer in 10 s" }
                    return
                }
                try state.withLock { $0.offerer }?.setRemoteAnswer(answer)
            } catch {
                state.withLock { $0.answerProblem = "\(error)" }
            }
        }

        func offererCandidate(_ candidate: ICECandidate) {
            let answerer: WebRTCAnswerer? = state.withLock { s in
                s.offererEvents.append("candidate")
                if s.answerer == nil { s.toAnswerer.append(candidate) }
                return s.answerer
            }
            answerer?.addRemoteCandidate(candidate.attributeLine, sdpMLineIndex: candidate.sdpMLineIndex)
        }

        var diagnostics: String {
            state.withLock { "app \($0.offererStates), device \($0.answererStates), problem \($0.answerProblem ?? "none")" }
        }

        func closeAll() {
            let (o, a) = state.withLock { ($0.offerer, $0.answerer) }
            o?.close()
            a?.close()
        }
    }

    @Test("the app applies the device's answer inside its own offer's callback: both links connect")
    func answerAppliedAsTheOfferGoesOut() async throws {
        let pair = Pair()
        defer { pair.closeAll() }
        let offerer = WebRTCOfferer(
            configuration: OfferConfiguration(), options: LinkHarness.loopbackOnly,
            events: LinkEvents(
                localDescription: { sdp in pair.offerReady(sdp) },
                localCandidate: { candidate in pair.offererCandidate(candidate) },
                stateChanged: { s in pair.state.withLock { $0.offererStates.append(s) } }))
        pair.state.withLock { $0.offerer = offerer }
        try offerer.start()
        let connected = try await waitUntil(seconds: 20) {
            pair.state.withLock { s in
                s.offererStates.contains(.connected) && s.answererStates.contains(.connected)
                    || s.answerProblem != nil || s.offererStates.contains { $0.isFinal }
            }
        }
        let s = pair.state.withLock { $0 }
        #expect(connected, "\(pair.diagnostics)")
        #expect(s.answerProblem == nil, "\(pair.diagnostics)")
        #expect(s.offererStates.contains(.connected), "\(pair.diagnostics)")
        #expect(s.answererStates.contains(.connected), "\(pair.diagnostics)")
        // What LinkEvents promises: the description first, every candidate after it.
        #expect(s.offererEvents.first == "description", "\(s.offererEvents)")
        #expect(s.offererEvents.filter { $0 == "description" }.count == 1)
    }
}
