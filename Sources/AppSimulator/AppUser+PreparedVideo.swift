import Foundation
import IPCWire
import WebRTCLink

/// What a P2P link is built for: a link prepared while the call rings is used for the answered
/// call only if `openVideo` asks for the same (else it is closed and a new one made).
struct VideoLinkShape: Sendable, Hashable {
    var devId: String
    var sendVideo: VideoFormat?
    var saveFramesTo: String?
    var decodes: Bool
    var hevc: Bool
    var ice: AppICEConfiguration
}

/// A link made while its call rings, waiting for the answer (PROTOCOL.md 4: the offer may only go
/// out once the call is answered).
struct PreparedVideoLink: Sendable {
    let link: any AppMediaLink
    let shape: VideoLinkShape
}

extension AppUser {
    // MARK: Preparing the link while the call rings

    /// Prepares the P2P link of a call that is ringing, so that the answer -> first frame time is
    /// the device's, not the app's start-up: the pipeline (webrtcbin, its transceivers, the DTLS
    /// certificate) is built and started on a background thread, webrtcbin makes its offer and
    /// gathers its candidates, and all of it waits. The next ``openVideo(streamType:sendVideo:saveFramesTo:sessionId:devId:auth:decodes:hevc:ice:)``
    /// for this session with the same `sendVideo`, `saveFramesTo`, `decodes`, `hevc` and `ice`
    /// sends the offer and candidates at once. If the call ends unanswered (rejected, cancelled,
    /// busy, not answered), or the app stops, the prepared link is closed and its pipeline stopped.
    /// A second call for the same session replaces the first prepared link.
    public func prepareVideo(sessionId: String, devId: String? = nil, sendVideo: VideoFormat? = nil,
                             saveFramesTo: String? = nil, decodes: Bool = true, hevc: Bool = false,
                             ice: AppICEConfiguration = AppICEConfiguration()) throws(AppError) {
        guard let target = devId ?? session?.peers.first else { throw .unknownDevice("?") }
        guard devices[target] != nil else { throw .unknownDevice(target) }
        discardPreparedVideo(sessionId: sessionId, why: "prepared again")
        let shape = VideoLinkShape(devId: target, sendVideo: sendVideo, saveFramesTo: saveFramesTo, decodes: decodes,
                                   hevc: hevc, ice: ice)
        let link = linkFactory.makeLink(AppLinkRequest(sessionId: sessionId, devId: target, sendVideo: sendVideo,
                                                       saveFramesTo: saveFramesTo, decodes: decodes, hevc: hevc, ice: ice))
        preparedVideo[sessionId] = PreparedVideoLink(link: link, shape: shape)
        log.log(.debug, "preparing the video link while the call rings", device: userId, fields: [("session", sessionId)])
        link.startInBackground { [weak self] error in
            guard let error else { return }
            Task { await self?.preparedStartFailed(link, error: error) }
        }
    }

    /// How far the link prepared for `sessionId` got (`opened`, `offerMade`); nil when none waits
    /// (never prepared, put to use by `openVideo`, or closed because the call ended).
    public func preparedVideoTimeline(sessionId: String) -> LinkTimeline? { preparedVideo[sessionId]?.link.timeline }

    /// Prepared links waiting for their call's answer.
    public var preparedVideoCount: Int { preparedVideo.count }

    /// The link prepared for this session if it was made for `shape` (it leaves the waiting list);
    /// one made for something else is closed.
    func takePreparedVideo(sessionId: String, shape: VideoLinkShape) -> (any AppMediaLink)? {
        guard let prepared = preparedVideo[sessionId] else { return nil }
        guard prepared.shape == shape else {
            discardPreparedVideo(sessionId: sessionId, why: "openVideo asked for another link")
            return nil
        }
        preparedVideo[sessionId] = nil
        log.log(.debug, "video link prepared while ringing put to use", device: userId, fields: [("session", sessionId)])
        return prepared.link
    }

    /// Closes the link prepared for `sessionId`, if any (its pipeline stops; a start still running
    /// stops it when it ends).
    func discardPreparedVideo(sessionId: String, why: String) {
        guard let prepared = preparedVideo.removeValue(forKey: sessionId) else { return }
        prepared.link.close()
        log.log(.debug, "prepared video link closed: \(why)", device: userId, fields: [("session", sessionId)])
    }

    /// The background start of a prepared link failed: it is closed, whether it still waited or
    /// was already put to use.
    private func preparedStartFailed(_ link: any AppMediaLink, error: WebRTCLinkError) {
        log.log(.warning, "cannot start the prepared WebRTC offerer: \(error)", device: userId,
                fields: [("session", link.sessionId)])
        if preparedVideo[link.sessionId]?.link === link {
            discardPreparedVideo(sessionId: link.sessionId, why: "its start failed")
        } else if videoLinks[link.sessionId] === link {
            closeVideo(sessionId: link.sessionId)
        } else {
            link.close()
        }
    }
}
