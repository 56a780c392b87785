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
    /// The retained meta's sealed bytes, encoded once per awake state (`MetaWire`): a device
    /// fills in its devId and `t` at every connect instead of encoding the whole meta (a
    /// reconnect storm publishes 100,000 of them). Nil: encode it in full.
    let metaWires: (awake: MetaWire?, asleep: MetaWire?)
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
        let meta = self.meta
        if meta.awake == nil {
            let wire = MetaWire(meta)
            self.metaWires = (wire, wire)
        } else {
            var asleep = meta
            asleep.awake = false
            var awake = meta
            awake.awake = true
            self.metaWires = (MetaWire(awake), MetaWire(asleep))
        }
    }

    /// The sealed meta of device `devId` at `t` from the bytes encoded once (nil when they cannot
    /// serve it: the full encoding then applies). `awake` as `Device.meta(awake:)` takes it.
    func metaPayload(devId: String, awake: Bool, t: Int64) -> [UInt8]? {
        (awake ? metaWires.awake : metaWires.asleep)?.payload(devId: devId, t: t)
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

/// A meta's plain sealed bytes (PROTOCOL.md 5: the retained meta is always plain) cut where its
/// devId and its `t` go, made by encoding it once with marks in their place. `payload` puts a
/// device's devId and time in and gives the very bytes the full encoding gives (a devId that JSON
/// would escape, or a payload past the wire's limit, gives nil: encode it in full).
struct MetaWire: Sendable {
    enum Slot: Sendable, Equatable { case devId, t }
    /// `slots.count + 1` pieces: piece i, slot i, piece i + 1 ...
    let pieces: [[UInt8]]
    let slots: [Slot]

    /// Marks no meta holds otherwise (ASCII, nothing JSON escapes; a 19-digit time).
    static let devIdMark = Array("ipcemu~devid~mark~4c1b9e".utf8)
    static let tMark: Int64 = 7_391_846_250_118_364_529

    /// Nil when the encoding fails or a mark is not where the meta's devId and `t` go.
    init?(_ meta: AbilityAnswer) {
        var marked = meta
        marked.devId = String(decoding: Self.devIdMark, as: UTF8.self)
        guard var sealer = try? PayloadSealer(mode: .plain, localKey: "", from: SealHeader.deviceFrom),
              let bytes = try? sealer.seal(marked.envelope(t: Self.tMark)) else { return nil }
        let tMark = Array(String(Self.tMark).utf8)
        var pieces: [[UInt8]] = []
        var slots: [Slot] = []
        var start = 0
        var i = 0
        while i < bytes.count {
            if bytes[i...].starts(with: Self.devIdMark) {
                pieces.append(Array(bytes[start..<i]))
                slots.append(.devId)
                i += Self.devIdMark.count
                start = i
            } else if bytes[i...].starts(with: tMark) {
                pieces.append(Array(bytes[start..<i]))
                slots.append(.t)
                i += tMark.count
                start = i
            } else {
                i += 1
            }
        }
        pieces.append(Array(bytes[start...]))
        guard slots.contains(.devId), slots.contains(.t) else { return nil }
        self.pieces = pieces
        self.slots = slots
    }

    /// The sealed meta of `devId` at `t`; nil when its devId needs JSON escaping or the payload
    /// would pass the wire's limit.
    func payload(devId: String, t: Int64) -> [UInt8]? {
        let id = devId.utf8
        // JSONValue writes every byte but these as it is.
        guard !id.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) else { return nil }
        let time = String(t).utf8
        var size = 0
        for piece in pieces { size += piece.count }
        for slot in slots { size += slot == .devId ? id.count : time.count }
        guard size <= maxPayloadBytes else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(size)
        for (index, slot) in slots.enumerated() {
            out.append(contentsOf: pieces[index])
            switch slot {
            case .devId: out.append(contentsOf: id)
            case .t: out.append(contentsOf: time)
            }
        }
        if let last = pieces.last { out.append(contentsOf: last) }
        return out
    }
}
