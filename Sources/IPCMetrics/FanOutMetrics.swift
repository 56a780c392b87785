import Prometheus

/// The shared encoders' fan-outs of a process (issue 24 item 5): one encoder per camera
/// configuration hands each access unit to every link that streams it, on delivery lanes; a lane
/// that falls behind makes its links skip to the next key frame. These series are the process's
/// (summed over its feeds, the stopped ones too), never labelled per device: a feed serves many
/// devices. docs/control.md lists them.
extension ControlMetrics {
    /// What the process's fan-outs counted at a scrape (`FanOutStatistics` summed).
    public struct FanOutGauges: Sendable, Equatable {
        /// Access units that came from the shared encoders (or pass-through readers).
        public var accessUnits = 0
        /// Of those, key frames.
        public var keyFrames = 0
        /// Key frames asked of the encoders (a link joining, a PLI/FIR, a lane overflow).
        public var keyFrameRequests = 0
        /// Key frames forced at the encoders after rate limiting.
        public var keyFramesForced = 0
        /// Access units handed to one link.
        public var deliveries = 0
        /// Delta frames not handed to a link waiting for a key frame.
        public var deltasSkipped = 0
        /// Links that started from the recent key frame, and the units replayed to them.
        public var startsFromRecent = 0
        public var recentUnitsReplayed = 0
        /// Links that fell behind while being caught up and waited for a key frame instead.
        public var catchUpsAbandoned = 0
        /// Times a link's delivery lane was too far behind: the link skipped to the next key frame.
        public var laneOverflows = 0
        /// Links subscribed now.
        public var subscribers = 0

        public init() {}
    }

    /// Writes the fan-out series (every family, even at zero).
    func writeFanOut(_ f: FanOutGauges, _ fed: inout [ObjectIdentifier: Int64]) {
        feed(.fanOutAccessUnits, [], f.accessUnits, &fed)
        feed(.fanOutKeyFrames, [], f.keyFrames, &fed)
        feed(.fanOutKeyFrameRequests, [], f.keyFrameRequests, &fed)
        feed(.fanOutKeyFramesForced, [], f.keyFramesForced, &fed)
        feed(.fanOutDeliveries, [], f.deliveries, &fed)
        feed(.fanOutDeltasSkipped, [], f.deltasSkipped, &fed)
        feed(.fanOutStartsFromRecent, [], f.startsFromRecent, &fed)
        feed(.fanOutRecentUnitsReplayed, [], f.recentUnitsReplayed, &fed)
        feed(.fanOutCatchUpsAbandoned, [], f.catchUpsAbandoned, &fed)
        feed(.fanOutLaneOverflows, [], f.laneOverflows, &fed)
        registry.makeGauge(descriptor: Family.fanOutSubscribers.descriptor).set(Double(f.subscribers))
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
    static let fanOutSubscribers = Self(name: "video_fanout_subscribers", unit: "", help: "Links subscribed to the shared video encoders now.")
}
