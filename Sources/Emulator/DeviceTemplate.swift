import CallEngine
import CallRuntime
import DeviceProfile
import IPCWire

/// What the devices of one template share, held once by reference (DESIGN.md "Scale";
/// docs/fleet.md "Memory per device"): the template's profile, and the starting configurations
/// derived from it that are the same for every device of it (the call engine's, the power
/// machine's, the data points'). A `Device` keeps only what is its own: its devId, and its
/// identity and broker credentials when they are more than the devId filled in; it builds its
/// full profile on demand (`Device.profile`).
///
/// A fleet makes one per group of its plan and gives it to each device; a device made without one
/// makes its own (so single devices and fleet devices run the same code).
public final class DeviceTemplate: Sendable {
    /// The template's profile (its identity is the template's, e.g. an `{index}` devId).
    public let profile: DeviceProfile
    /// The engine's configuration (with the template's devId: each device sets its own).
    let engine: DeviceSideEngine.Config
    let power: PowerConfig
    let dataPoints: DataPointStore
    /// The template's 309 answer and meta (PROTOCOL.md 5), its skill encoded once; a device's is
    /// this with its devId (`Device.meta(awake:)`).
    let meta: AbilityAnswer
    /// Whether the template's name is its devId (a device's name then follows its devId, as
    /// `DeviceProfile.withDevId` does).
    private let nameIsDevId: Bool

    public init(_ profile: DeviceProfile) throws(DataPointStoreError) {
        self.profile = profile
        self.engine = DeviceSideEngine.Config(profile: profile)
        self.power = PowerConfig(profile: profile)
        self.dataPoints = try DataPointStore(ids: profile.dataPoints.ids, startValues: profile.dataPointStartValues)
        self.nameIsDevId = profile.identity.name == profile.identity.devId
        self.meta = profile.meta
    }

    /// The identity of the template's device `devId`: the template's, with the devId (and a name
    /// that was the devId) replaced.
    func identity(devId: String) -> DeviceProfile.Identity {
        var identity = profile.identity
        identity.devId = devId
        if nameIsDevId { identity.name = devId }
        return identity
    }

    /// Whether `profile` is this template but for its identity and broker: a device of it. The
    /// category is the engine's (`extra.category` of its calls), so it must be the template's.
    func isTemplate(of profile: DeviceProfile) -> Bool {
        guard profile.identity.category == self.profile.identity.category else { return false }
        var probe = profile
        probe.identity = self.profile.identity
        probe.broker = self.profile.broker
        return probe == self.profile
    }
}

/// What a device runs on that is the same for every device of a fleet: the engine context (its
/// clock and timer scheduler), the video feeds, the link factory, the event log and the media
/// folder, held once by
/// reference (docs/fleet.md "Memory per device": five existentials and references were 136 bytes
/// inline in every device). A fleet makes one for all its devices; a device made alone makes its
/// own.
public final class DeviceRuntime: Sendable {
    let context: EngineContext
    let feeds: VideoFeeds
    let linkFactory: any DeviceLinkFactory
    let log: EventLog
    /// Where a device's media store keeps its folder (nil: `DeviceMediaStore.defaultRoot`).
    let mediaRoot: String?

    /// - Parameters:
    ///   - timers: nil: `TimerScheduler.shared`.
    ///   - links: nil: the real GStreamer links on `feeds`.
    public init(log: EventLog = EventLog(), clock: any EngineClock = SystemClock(), timers: (any TimerScheduling)? = nil,
                feeds: VideoFeeds = .shared, links: (any DeviceLinkFactory)? = nil, mediaRoot: String? = nil) {
        self.context = EngineContext(clock: clock, scheduler: timers ?? TimerScheduler.shared)
        self.feeds = feeds
        self.linkFactory = links ?? GStreamerDeviceLinks(feeds: feeds)
        self.log = log
        self.mediaRoot = mediaRoot
    }
}

/// A device's own part of its profile when it is more than its devId (a name of its own, broker
/// credentials filled in per device): made only for such devices.
final class DeviceOwnProfile: Sendable {
    let identity: DeviceProfile.Identity
    let broker: DeviceProfile.Broker

    init(identity: DeviceProfile.Identity, broker: DeviceProfile.Broker) {
        self.identity = identity
        self.broker = broker
    }
}

extension DeviceSideEngine {
    /// The starting configuration of either engine kind (PROTOCOL.md 8: `doorbell.kind`).
    enum Config: Sendable {
        case screenIPC(DeviceEngineConfig)
        case doorbell(DoorbellEngineConfig)

        init(profile: DeviceProfile) {
            if profile.doorbell.kind.isTuyaDoorbell {
                self = .doorbell(DoorbellEngineConfig(profile: profile))
            } else {
                self = .screenIPC(DeviceEngineConfig(profile: profile))
            }
        }

        /// The engine of device `devId` (the template's sets and lists shared, copy on write).
        func engine(devId: String) -> DeviceSideEngine {
            switch self {
            case .screenIPC(var config):
                config.devId = devId
                return DeviceSideEngine(screenIPC: config)
            case .doorbell(var config):
                config.devId = devId
                return DeviceSideEngine(doorbell: config)
            }
        }
    }
}
