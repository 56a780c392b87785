import CallEngine
import IPCWire

/// What an app "decoded" on one simulated link. A model of a stream: frame timing and counters,
/// no pixels and no codec. Each frame carries the stream's counter (as the test pattern's stamp
/// does), so a gap in the counters counts as dropped frames, as `VideoStats` counts them.
public struct ScenarioSimVideoStats: Sendable, Equatable {
    public var framesDecoded = 0
    public var keyFrames = 0
    public var framesDropped = 0
    public var width = 0
    public var height = 0
    /// When the first and the last frame arrived (unix ms, the simulation's time).
    public var firstFrameMs: Int64?
    public var lastFrameMs: Int64?
    /// When this app knew the call was answered (unix ms), if it did before the first frame.
    public var answeredMs: Int64?
    var lastCounter: UInt16?

    public init() {}

    mutating func decode(counter: UInt16, keyFrame: Bool, format: VideoStreamFormat, at now: Int64) {
        framesDecoded += 1
        if keyFrame { keyFrames += 1 }
        width = format.width
        height = format.height
        if firstFrameMs == nil { firstFrameMs = now }
        lastFrameMs = now
        if let last = lastCounter { framesDropped += Int(counter &- last &- 1) }
        lastCounter = counter
    }
}

/// One link's stream on the device side: which user it goes to, its format, when it started, how
/// many frames went, and a token so a frame scheduled for an earlier stream of the session is stale.
struct ScenarioSimStream {
    let user: Int
    let format: VideoStreamFormat
    let startMs: Int64
    var sent = 0
    let token: UInt64

    /// When frame `index` (0 = the key frame at the start) goes: `startMs + index * 1000 / fps`,
    /// rounded to the millisecond, so the rate never drifts.
    func time(ofFrame index: Int) -> Int64 {
        let fps = Int64(max(1, format.fps))
        return startMs &+ (Int64(index) * 1000 + fps / 2) / fps
    }
}

/// Simulated video on the P2P links (docs/scenarios.md, "Simulated time"): once a link is up the
/// device sends frames at the stream's rate, the first a key frame, as events on the queue; the
/// app counts them per link. They stop when the link closes or breaks.
extension ScenarioSimulation {
    /// Video frames sent on each open link of `devId`, by session (as `Device.mediaLinks`).
    public func framesSent(device devId: String) -> [String: Int] {
        guard let d = deviceIndex[devId] else { return [:] }
        return devices[d].streams.mapValues(\.sent)
    }

    /// What `userId` decoded on the link of `sessionId`, nil when it never had one.
    public func videoStats(user userId: String, sessionId: String) -> ScenarioSimVideoStats? {
        userIndex[userId].flatMap { users[$0].video[sessionId] }
    }

    /// The link of `session` is up: the device starts its stream (the format the offer asked for).
    func startStream(device d: Int, session: String, user u: Int) {
        let type = devices[d].offeredStreams[session] ?? .main
        guard let format = devices[d].video[type] else { return }
        let stream = ScenarioSimStream(user: u, format: format, startMs: now, token: newToken())
        devices[d].streams[session] = stream
        var stats = ScenarioSimVideoStats()
        stats.answeredMs = users[u].answeredAt[session]
        users[u].video[session] = stats
        queue.push(.frame(device: d, session: session, token: stream.token), at: stream.time(ofFrame: 0))
    }

    /// The link of `session` closed or broke: its stream stops.
    func stopStream(device d: Int, session: String) {
        devices[d].streams.removeValue(forKey: session)
    }

    /// One frame of a stream: sent, decoded by the app if its end of the link is still up, and
    /// the next one scheduled.
    func sendFrame(device d: Int, session: String, token: UInt64) {
        guard var stream = devices[d].streams[session], stream.token == token, devices[d].links[session] == stream.user else { return }
        let index = stream.sent
        stream.sent += 1
        devices[d].streams[session] = stream
        let u = stream.user
        if users[u].links[session] == d {
            users[u].video[session, default: ScenarioSimVideoStats()]
                .decode(counter: UInt16(truncatingIfNeeded: index), keyFrame: index == 0, format: stream.format, at: now)
            events.append(.user(users[u].userId, .videoFrame(session: session)))
        }
        queue.push(.frame(device: d, session: session, token: token), at: stream.time(ofFrame: index + 1))
    }
}
