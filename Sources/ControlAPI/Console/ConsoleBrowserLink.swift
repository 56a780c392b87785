import AppSimulator
import Foundation
import Synchronization
import WebRTCLink

/// The console phone's P2P links (PROTOCOL.md 4): the page's browser is the WebRTC peer, so the
/// link `AppUser` drives only carries the browser's offer out and the device's answer and
/// candidates back. `AppUser` does the 302 signalling (offer with `auth` and `tid`, the app's link
/// rules on whose replies count, `disconnect`); the console reads the outcome from the link.
final class BrowserLinks: AppLinkFactory {
    /// The browser's offer for each session, until its link is made; then the link.
    private struct Pending {
        var offers: [String: String] = [:]
        var links: [String: BrowserLink] = [:]
    }
    private let pending = Mutex(Pending())

    /// The next link of session `sessionId` offers `sdp`.
    func offer(_ sdp: String, sessionId: String) {
        pending.withLock { $0.offers[sessionId] = sdp }
    }

    /// The link made for session `sessionId` (once `AppUser.openVideo` has made it).
    func link(sessionId: String) -> BrowserLink? {
        pending.withLock { $0.links[sessionId] }
    }

    func makeLink(_ request: AppLinkRequest) -> any AppMediaLink {
        pending.withLock { p in
            let link = BrowserLink(sessionId: request.sessionId, devId: request.devId,
                                   offerSDP: p.offers.removeValue(forKey: request.sessionId) ?? "")
            p.links[request.sessionId] = link
            return link
        }
    }
}

/// One browser link: its offer goes out as the app's signal; the device's answer and candidates
/// are kept for the page, and every change is told on `progress`.
final class BrowserLink: AppMediaLink {
    enum Progress: Sendable {
        case answer, candidate, endOfCandidates, closed, gathered, timedOut
    }

    struct Seen: Sendable {
        var answer: String?
        var candidates: [(line: String, mLineIndex: Int)] = []
        var ended = false
        var closed = false
    }

    let sessionId: String
    let devId: String
    let transactionId = String(UInt64.random(in: 0...UInt64.max), radix: 16)
    let ice = AppICEConfiguration()
    let signals: AsyncStream<AppLinkSignal>
    let progress: AsyncStream<Progress>
    private let offerSDP: String
    private let signalSink: AsyncStream<AppLinkSignal>.Continuation
    private let progressSink: AsyncStream<Progress>.Continuation
    private let seen = Mutex(Seen())
    private let answeredAt = Mutex<Date?>(nil)

    init(sessionId: String, devId: String, offerSDP: String) {
        self.sessionId = sessionId
        self.devId = devId
        self.offerSDP = offerSDP
        (signals, signalSink) = AsyncStream.makeStream()
        (progress, progressSink) = AsyncStream.makeStream()
    }

    var snapshot: Seen { seen.withLock { $0 } }

    /// Tells `progress` `event` after `delay` (the console's answer timeout and gather window).
    func tell(_ event: Progress, after delay: Duration) -> Task<Void, Never> {
        Task { [progressSink] in
            guard (try? await Task.sleep(for: delay)) != nil else { return }
            progressSink.yield(event)
        }
    }

    /// The device's end-of-candidates for this link (`AppUser` does not hand it to links).
    func endOfCandidates() {
        seen.withLock { $0.ended = true }
        progressSink.yield(.endOfCandidates)
    }

    // MARK: AppMediaLink

    func start() throws(WebRTCLinkError) {
        signalSink.yield(.offer(sdp: offerSDP))
    }

    func startInBackground(_ done: @escaping @Sendable (WebRTCLinkError?) -> Void) {
        signalSink.yield(.offer(sdp: offerSDP))
        done(nil)
    }

    func setRemoteAnswer(_ sdp: String) throws(WebRTCLinkError) {
        seen.withLock { $0.answer = sdp }
        progressSink.yield(.answer)
    }

    func addRemoteCandidate(_ line: String, sdpMLineIndex: Int) {
        seen.withLock { $0.candidates.append((line, sdpMLineIndex)) }
        progressSink.yield(.candidate)
    }

    /// The browser holds the media; the console reads the device's view of the link instead.
    var state: LinkState { snapshot.closed ? .closed : .new }

    func offerSent() {}
    func answerArrived() { answeredAt.withLock { $0 = Date() } }
    func callAnswered(at date: Date?) {}
    var answerArrivedAt: Date? { answeredAt.withLock { $0 } }
    var stats: VideoStats { VideoStats() }
    var timeline: LinkTimeline { LinkTimeline() }
    var linkStats: LinkStatistics { LinkStatistics() }
    var selectedCandidatePair: ICECandidatePair? { nil }
    var hevcReport: AppHEVCReceiver.Report? { nil }

    func close() {
        seen.withLock { $0.closed = true }
        signalSink.finish()
        progressSink.yield(.closed)
    }
}
