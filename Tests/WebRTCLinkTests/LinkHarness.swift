import Foundation
import Synchronization
import WebRTCLink

/// Two real peers in one process: an offerer (the app simulator) and an answerer (the device),
/// with signalling passed in memory and every ICE candidate on loopback.
final class LinkHarness: Sendable {
    /// What the peers' callbacks (on GStreamer's threads) and the test share.
    private struct State {
        var offerer: WebRTCOfferer?
        var answerer: WebRTCAnswerer?
        var offerSDP: String?
        var answerSDP: String?
        var toAnswerer: [ICECandidate] = []
        var toOfferer: [ICECandidate] = []
        var offererStateLog: [(LinkState, ContinuousClock.Instant)] = []
        var answererStateLog: [(LinkState, ContinuousClock.Instant)] = []
        var framesAtOfferer = 0
        var firstFrameAtOfferer: ContinuousClock.Instant?
        var lastFrameAtOfferer: DecodedVideoFrame?
        var answerSetAt: ContinuousClock.Instant?
        var endOfCandidatesFromAnswerer = false
        var candidateLog: [String] = []
    }

    private let state = Mutex(State())

    static let loopbackOnly = LinkOptions(localAddresses: ["127.0.0.1"])

    var offerer: WebRTCOfferer? { state.withLock { $0.offerer } }
    var answerer: WebRTCAnswerer? { state.withLock { $0.answerer } }
    var offer: String? { state.withLock { $0.offerSDP } }
    var answer: String? { state.withLock { $0.answerSDP } }
    var offererStates: [LinkState] { state.withLock { $0.offererStateLog.map(\.0) } }
    var answererStates: [LinkState] { state.withLock { $0.answererStateLog.map(\.0) } }
    var framesReceivedByOfferer: Int { state.withLock { $0.framesAtOfferer } }
    var lastFrame: DecodedVideoFrame? { state.withLock { $0.lastFrameAtOfferer } }
    var answererSentEndOfCandidates: Bool { state.withLock { $0.endOfCandidatesFromAnswerer } }

    /// Time from handing the answer to the offerer to its first decoded frame.
    var answerToFirstFrame: Duration? {
        state.withLock {
            guard let answerSetAt = $0.answerSetAt, let firstFrameAtOfferer = $0.firstFrameAtOfferer else { return nil }
            return firstFrameAtOfferer - answerSetAt
        }
    }

    /// States and counters of both sides, for failure messages.
    var diagnostics: String {
        let (offerer, answerer) = state.withLock { ($0.offerer, $0.answerer) }
        if let dir = ProcessInfo.processInfo.environment["WEBRTCLINK_DOT_DIR"] {
            try? (offerer?.pipelineGraph ?? "").write(toFile: "\(dir)/app.dot", atomically: true, encoding: .utf8)
            try? (answerer?.pipelineGraph ?? "").write(toFile: "\(dir)/device.dot", atomically: true, encoding: .utf8)
        }
        return "app states \(offererStates), device states \(answererStates); app \(String(describing: offerer?.stats)); "
            + "device \(String(describing: answerer?.stats)); candidates \(state.withLock { $0.candidateLog })"
    }

    func answererState(_ predicate: (LinkState) -> Bool) -> ContinuousClock.Instant? {
        state.withLock { $0.answererStateLog.first { predicate($0.0) }?.1 }
    }

    /// Starts the offerer; returns once its offer is out.
    func startOfferer(
        configuration: OfferConfiguration = OfferConfiguration(), options: LinkOptions = loopbackOnly,
        dataChannel: (@Sendable (WebRTCDataChannel) -> Void)? = nil
    ) async throws -> String {
        let events = LinkEvents(
            localDescription: { [weak self] sdp in self?.state.withLock { $0.offerSDP = sdp } },
            localCandidate: { [weak self] candidate in self?.fromOfferer(candidate) },
            stateChanged: { [weak self] link in self?.state.withLock { $0.offererStateLog.append((link, .now)) } },
            videoFrame: { [weak self] frame in
                self?.state.withLock {
                    $0.framesAtOfferer += 1
                    if $0.firstFrameAtOfferer == nil { $0.firstFrameAtOfferer = .now }
                    $0.lastFrameAtOfferer = frame
                }
            }, dataChannel: dataChannel)
        let offerer = WebRTCOfferer(configuration: configuration, options: options, events: events)
        state.withLock { $0.offerer = offerer }
        try offerer.start()
        guard try await waitUntil(seconds: 10, { self.offer != nil }), let offer else {
            throw HarnessError.timeout("no offer")
        }
        return offer
    }

    /// Starts an answerer on `offer` (possibly edited by the test) and connects the two.
    func startAnswerer(
        offer: String, media: SendMedia, options: LinkOptions = loopbackOnly,
        dataChannel: (@Sendable (WebRTCDataChannel) -> Void)? = nil, prepared: PreparedAnswerer? = nil,
        keyFrameRequested: (@Sendable () -> Void)? = nil
    ) async throws {
        let events = LinkEvents(
            localDescription: { [weak self] sdp in self?.state.withLock { $0.answerSDP = sdp } },
            localCandidate: { [weak self] candidate in self?.fromAnswerer(candidate) },
            stateChanged: { [weak self] link in self?.state.withLock { $0.answererStateLog.append((link, .now)) } },
            keyFrameRequested: keyFrameRequested,
            dataChannel: dataChannel)
        let answerer = try WebRTCAnswerer(offer: offer, media: media, options: options, events: events, prepared: prepared)
        let pending: [ICECandidate] = state.withLock { shared in
            shared.answerer = answerer
            defer { shared.toAnswerer = [] }
            return shared.toAnswerer
        }
        try answerer.start()
        for candidate in pending { answerer.addRemoteCandidate(candidate.attributeLine, sdpMLineIndex: candidate.sdpMLineIndex) }
        guard try await waitUntil(seconds: 10, { self.answer != nil }), let answer else {
            throw HarnessError.timeout("no answer")
        }
        let offerer: WebRTCOfferer? = state.withLock {
            $0.answerSetAt = .now
            return $0.offerer
        }
        try offerer?.setRemoteAnswer(answer)
        let early: [ICECandidate] = state.withLock { shared in
            defer { shared.toOfferer = [] }
            return shared.toOfferer
        }
        for candidate in early { offerer?.addRemoteCandidate(candidate.attributeLine, sdpMLineIndex: candidate.sdpMLineIndex) }
    }

    private func fromOfferer(_ candidate: ICECandidate) {
        let answerer: WebRTCAnswerer? = state.withLock {
            $0.candidateLog.append("app: \(candidate.candidate) [\(candidate.sdpMLineIndex)]")
            if $0.answerer == nil { $0.toAnswerer.append(candidate) }
            return $0.answerer
        }
        // The wire form (a= prefix and CRLF), as 302 messages carry it.
        answerer?.addRemoteCandidate(candidate.attributeLine, sdpMLineIndex: candidate.sdpMLineIndex)
    }

    private func fromAnswerer(_ candidate: ICECandidate) {
        let offerer: WebRTCOfferer? = state.withLock {
            $0.candidateLog.append("device: \(candidate.candidate) [\(candidate.sdpMLineIndex)]")
            if candidate.isEndOfCandidates { $0.endOfCandidatesFromAnswerer = true }
            if $0.answerSetAt == nil { $0.toOfferer.append(candidate) }
            return $0.answerSetAt == nil ? nil : $0.offerer
        }
        // Without the a= prefix: both forms must be accepted.
        offerer?.addRemoteCandidate(candidate.candidate, sdpMLineIndex: candidate.sdpMLineIndex)
    }

    func closeAll() {
        let (offerer, answerer) = state.withLock { ($0.offerer, $0.answerer) }
        let restarts = (offerer?.stats.stalledReceiverRestarts ?? 0) + (answerer?.stats.stalledReceiverRestarts ?? 0)
        if restarts > 0 { print("[harness] stalled receive paths restarted: \(restarts)") }
        offerer?.close()
        answerer?.close()
    }
}

enum HarnessError: Error { case timeout(String) }

/// Polls `condition` every 20 ms for up to `seconds`; true if it became true.
func waitUntil(seconds: Double, _ condition: @Sendable () -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    return condition()
}
