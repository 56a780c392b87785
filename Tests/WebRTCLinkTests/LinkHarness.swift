import Foundation
import WebRTCLink

/// Two real peers in one process: an offerer (the app simulator) and an answerer (the device),
/// with signalling passed in memory and every ICE candidate on loopback.
final class LinkHarness: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var offerer: WebRTCOfferer?
    private(set) var answerer: WebRTCAnswerer?
    private var offerSDP: String?
    private var answerSDP: String?
    private var toAnswerer: [ICECandidate] = []
    private var toOfferer: [ICECandidate] = []
    private var offererStateLog: [(LinkState, ContinuousClock.Instant)] = []
    private var answererStateLog: [(LinkState, ContinuousClock.Instant)] = []
    private var framesAtOfferer = 0
    private var firstFrameAtOfferer: ContinuousClock.Instant?
    private var lastFrameAtOfferer: DecodedVideoFrame?
    private var answerSetAt: ContinuousClock.Instant?
    private var endOfCandidatesFromAnswerer = false
    private var candidateLog: [String] = []

    static let loopbackOnly = LinkOptions(localAddresses: ["127.0.0.1"])

    var offer: String? { lock.withLock { offerSDP } }
    var answer: String? { lock.withLock { answerSDP } }
    var offererStates: [LinkState] { lock.withLock { offererStateLog.map(\.0) } }
    var answererStates: [LinkState] { lock.withLock { answererStateLog.map(\.0) } }
    var framesReceivedByOfferer: Int { lock.withLock { framesAtOfferer } }
    var lastFrame: DecodedVideoFrame? { lock.withLock { lastFrameAtOfferer } }
    var answererSentEndOfCandidates: Bool { lock.withLock { endOfCandidatesFromAnswerer } }

    /// Time from handing the answer to the offerer to its first decoded frame.
    var answerToFirstFrame: Duration? {
        lock.withLock {
            guard let answerSetAt, let firstFrameAtOfferer else { return nil }
            return firstFrameAtOfferer - answerSetAt
        }
    }

    /// States and counters of both sides, for failure messages.
    var diagnostics: String {
        let (offerer, answerer) = lock.withLock { (self.offerer, self.answerer) }
        if let dir = ProcessInfo.processInfo.environment["WEBRTCLINK_DOT_DIR"] {
            try? (offerer?.pipelineGraph ?? "").write(toFile: "\(dir)/app.dot", atomically: true, encoding: .utf8)
            try? (answerer?.pipelineGraph ?? "").write(toFile: "\(dir)/device.dot", atomically: true, encoding: .utf8)
        }
        return "app states \(offererStates), device states \(answererStates); app \(String(describing: offerer?.stats)); "
            + "device \(String(describing: answerer?.stats)); candidates \(lock.withLock { candidateLog })"
    }

    func answererState(_ predicate: (LinkState) -> Bool) -> ContinuousClock.Instant? {
        lock.withLock { answererStateLog.first { predicate($0.0) }?.1 }
    }

    /// Starts the offerer; returns once its offer is out.
    func startOfferer(
        configuration: OfferConfiguration = OfferConfiguration(), options: LinkOptions = loopbackOnly,
        dataChannel: (@Sendable (WebRTCDataChannel) -> Void)? = nil
    ) async throws -> String {
        let events = LinkEvents(
            localDescription: { [weak self] sdp in self?.lock.withLock { self?.offerSDP = sdp } },
            localCandidate: { [weak self] candidate in self?.fromOfferer(candidate) },
            stateChanged: { [weak self] state in self?.lock.withLock { self?.offererStateLog.append((state, .now)) } },
            videoFrame: { [weak self] frame in
                guard let self else { return }
                self.lock.withLock {
                    self.framesAtOfferer += 1
                    if self.firstFrameAtOfferer == nil { self.firstFrameAtOfferer = .now }
                    self.lastFrameAtOfferer = frame
                }
            }, dataChannel: dataChannel)
        let offerer = WebRTCOfferer(configuration: configuration, options: options, events: events)
        lock.withLock { self.offerer = offerer }
        try offerer.start()
        guard try await waitUntil(seconds: 10, { self.offer != nil }), let offer else {
            throw HarnessError.timeout("no offer")
        }
        return offer
    }

    /// Starts an answerer on `offer` (possibly edited by the test) and connects the two.
    func startAnswerer(
        offer: String, media: SendMedia, options: LinkOptions = loopbackOnly,
        dataChannel: (@Sendable (WebRTCDataChannel) -> Void)? = nil, prepared: PreparedAnswerer? = nil
    ) async throws {
        let events = LinkEvents(
            localDescription: { [weak self] sdp in self?.lock.withLock { self?.answerSDP = sdp } },
            localCandidate: { [weak self] candidate in self?.fromAnswerer(candidate) },
            stateChanged: { [weak self] state in self?.lock.withLock { self?.answererStateLog.append((state, .now)) } },
            dataChannel: dataChannel)
        let answerer = try WebRTCAnswerer(offer: offer, media: media, options: options, events: events, prepared: prepared)
        let pending: [ICECandidate] = lock.withLock {
            self.answerer = answerer
            defer { toAnswerer = [] }
            return toAnswerer
        }
        try answerer.start()
        for candidate in pending { answerer.addRemoteCandidate(candidate.attributeLine, sdpMLineIndex: candidate.sdpMLineIndex) }
        guard try await waitUntil(seconds: 10, { self.answer != nil }), let answer else {
            throw HarnessError.timeout("no answer")
        }
        let offerer: WebRTCOfferer? = lock.withLock {
            answerSetAt = .now
            return self.offerer
        }
        try offerer?.setRemoteAnswer(answer)
        let early: [ICECandidate] = lock.withLock {
            defer { toOfferer = [] }
            return toOfferer
        }
        for candidate in early { offerer?.addRemoteCandidate(candidate.attributeLine, sdpMLineIndex: candidate.sdpMLineIndex) }
    }

    private func fromOfferer(_ candidate: ICECandidate) {
        let answerer: WebRTCAnswerer? = lock.withLock {
            candidateLog.append("app: \(candidate.candidate) [\(candidate.sdpMLineIndex)]")
            if self.answerer == nil { toAnswerer.append(candidate) }
            return self.answerer
        }
        // The wire form (a= prefix and CRLF), as 302 messages carry it.
        answerer?.addRemoteCandidate(candidate.attributeLine, sdpMLineIndex: candidate.sdpMLineIndex)
    }

    private func fromAnswerer(_ candidate: ICECandidate) {
        let offerer: WebRTCOfferer? = lock.withLock {
            candidateLog.append("device: \(candidate.candidate) [\(candidate.sdpMLineIndex)]")
            if candidate.isEndOfCandidates { endOfCandidatesFromAnswerer = true }
            if answerSetAt == nil { toOfferer.append(candidate) }
            return answerSetAt == nil ? nil : self.offerer
        }
        // Without the a= prefix: both forms must be accepted.
        offerer?.addRemoteCandidate(candidate.candidate, sdpMLineIndex: candidate.sdpMLineIndex)
    }

    func closeAll() {
        let (offerer, answerer) = lock.withLock { (self.offerer, self.answerer) }
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
