import Prometheus

// The shared encoders' fan-outs of a process (issue 24 item 5): one encoder per camera
// configuration hands each access unit to every link that streams it, on delivery lanes; a lane
// that falls behind makes its links skip to the next key frame. These series are the process's
// (summed over its feeds, the stopped ones too), never labelled per device: a feed serves many
// devices. docs/control.md lists them.

/// What a process's fan-outs counted (they only grow). WebRTCLink's `FanOutStatistics` is the one
/// conformer (declared in ControlAPI, which sums the feeds with `FanOutStatistics.add`): IPCMetrics
/// stays off the GStreamer layer and keeps no copy of the counters.
public protocol VideoFanOutCounts: Sendable {
    var accessUnits: Int { get }
    var keyFrames: Int { get }
    var keyFrameRequests: Int { get }
    var keyFramesForced: Int { get }
    var deliveries: Int { get }
    var deltasSkipped: Int { get }
    var startsFromRecent: Int { get }
    var recentUnitsReplayed: Int { get }
    var catchUpsAbandoned: Int { get }
    var laneOverflows: Int { get }
    var encoderFrames: Int { get }
    var encoderFramesDropped: Int { get }
}

extension ControlMetrics {
    /// Writes the fan-out series (every family, even at zero: `counts` nil is a process without feeds).
    func writeFanOut(_ c: (any VideoFanOutCounts)?, subscribers: Int, _ fed: inout [ObjectIdentifier: Int64]) {
        feed(.fanOutAccessUnits, [], c?.accessUnits ?? 0, &fed)
        feed(.fanOutKeyFrames, [], c?.keyFrames ?? 0, &fed)
        feed(.fanOutKeyFrameRequests, [], c?.keyFrameRequests ?? 0, &fed)
        feed(.fanOutKeyFramesForced, [], c?.keyFramesForced ?? 0, &fed)
        feed(.fanOutDeliveries, [], c?.deliveries ?? 0, &fed)
        feed(.fanOutDeltasSkipped, [], c?.deltasSkipped ?? 0, &fed)
        feed(.fanOutStartsFromRecent, [], c?.startsFromRecent ?? 0, &fed)
        feed(.fanOutRecentUnitsReplayed, [], c?.recentUnitsReplayed ?? 0, &fed)
        feed(.fanOutCatchUpsAbandoned, [], c?.catchUpsAbandoned ?? 0, &fed)
        feed(.fanOutLaneOverflows, [], c?.laneOverflows ?? 0, &fed)
        feed(.fanOutEncoderFrames, [], c?.encoderFrames ?? 0, &fed)
        feed(.fanOutEncoderFramesDropped, [], c?.encoderFramesDropped ?? 0, &fed)
        registry.makeGauge(descriptor: Family.fanOutSubscribers.descriptor).set(Double(subscribers))
    }
}

extension ControlMetrics.Family {
    static let fanOutAccessUnits = Self(name: "video_fanout_access_units", unit: "total",
                                        help: "Access units the shared video encoders (or pass-through readers) handed to their fan-outs.")
    static let fanOutKeyFrames = Self(name: "video_fanout_key_frames", unit: "total", help: "Of those access units, key frames.")
    static let fanOutKeyFrameRequests = Self(name: "video_fanout_key_frame_requests", unit: "total",
                                             help: "Key frames asked of the shared encoders (a link joining, a PLI/FIR, a lane overflow), before rate limiting.")
    static let fanOutKeyFramesForced = Self(name: "video_fanout_key_frames_forced", unit: "total",
                                            help: "Key frames forced at the shared encoders.")
    static let fanOutDeliveries = Self(name: "video_fanout_deliveries", unit: "total", help: "Access units handed to one link.")
    static let fanOutDeltasSkipped = Self(name: "video_fanout_deltas_skipped", unit: "total",
                                          help: "Delta frames not handed to a link that waits for a key frame (a join, a lane overflow).")
    static let fanOutStartsFromRecent = Self(name: "video_fanout_starts_from_recent", unit: "total",
                                             help: "Links that started at once from the recent key frame.")
    static let fanOutRecentUnitsReplayed = Self(name: "video_fanout_recent_units_replayed", unit: "total",
                                                help: "Access units replayed to links starting from the recent key frame.")
    static let fanOutCatchUpsAbandoned = Self(name: "video_fanout_catch_ups_abandoned", unit: "total",
                                              help: "Links that fell behind while being caught up and waited for a key frame instead.")
    static let fanOutLaneOverflows = Self(name: "video_fanout_lane_overflows", unit: "total",
                                          help: "Times a link's delivery lane was too far behind (CPU short): the link skipped to the next key frame.")
    static let fanOutEncoderFrames = Self(name: "video_fanout_encoder_frames", unit: "total",
                                          help: "Raw or captured frames pushed into the shared video encoders.")
    static let fanOutEncoderFramesDropped = Self(name: "video_fanout_encoder_frames_dropped", unit: "total",
                                                 help: "Of those frames, the ones dropped at an encoder's input: its queue was full (the encoder's thread behind).")
    static let fanOutSubscribers = Self(name: "video_fanout_subscribers", unit: "", help: "Links subscribed to the shared video encoders now.")
}
