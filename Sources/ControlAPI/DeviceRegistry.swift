import CallEngine
import CallRuntime
import Emulator
import IPCMetrics
import WebRTCLink
import Foundation
import Synchronization
import IPCWire

/// Every device the control API can reach in this process, by devId (`ipcemu run` has one; a
/// fleet has many). Adding a device starts its monitor, which feeds the journal, the metrics and
/// the event stream from `device.events()`.
public actor DeviceRegistry {
    private var order: [String] = []
    private var entries: [String: ControlledDevice] = [:]
    public nonisolated let hub: EventHub
    public nonisolated let metrics: ControlMetrics
    /// Where journals go (`<dir>/<devId>.jsonl`); nil keeps them in memory only.
    public nonisolated let journalDirectory: String?
    /// A fleet's one journal file for the whole process (each line names its device).
    public nonisolated let fleetJournal: JournalFile?
    /// The fleet these devices belong to (fleet-wide faults), if any.
    public private(set) var fleet: Fleet?

    public init(hub: EventHub = EventHub(), metrics: ControlMetrics = ControlMetrics(), journalDirectory: String? = nil,
                fleetJournal: JournalFile? = nil) {
        self.hub = hub
        self.metrics = metrics
        self.journalDirectory = journalDirectory
        self.fleetJournal = fleetJournal
    }

    public func setFleet(_ fleet: Fleet) { self.fleet = fleet }

    /// The cloud join this process runs (`GET /api/cloud`), if any.
    public private(set) var cloud: CloudConsoleSource?

    public func setCloud(_ source: @escaping CloudConsoleSource) { cloud = source }

    /// Registers a device (already started or not) and starts observing it.
    @discardableResult
    public func add(_ device: Device) async throws(ControlError) -> ControlledDevice {
        guard entries[device.devId] == nil else {
            throw ControlError(status: 409, "device '\(device.devId)' is already registered")
        }
        let journal = fleetJournal != nil || fleet != nil
            ? CallJournal(devId: device.devId, shared: fleetJournal)
            : try CallJournal(devId: device.devId, directory: journalDirectory)
        let entry = ControlledDevice(device: device, journal: journal)
        entries[device.devId] = entry
        order.append(device.devId)
        let events = await device.events()
        var monitor = DeviceMonitor(devId: device.devId, journal: journal, metrics: metrics, hub: hub)
        monitor.doorbellKind = device.doorbellKind == .screenIPC ? nil : device.doorbellKind.rawValue
        monitor.media = device.mediaStore
        entry.monitorTask = Task { await monitor.run(events) }
        return entry
    }

    /// Unregisters a device that stopped (a cloud device whose link went down is made anew at the
    /// next join): its monitor ends once the device's events end; its journal file is closed.
    public func remove(_ devId: String) async {
        guard let entry = entries.removeValue(forKey: devId) else { return }
        order.removeAll { $0 == devId }
        // The last events (the offline status, an ended call) reach the journal; at most 2 s.
        let monitor = entry.monitorTask
        let timer = Task {
            try? await Task.sleep(for: .seconds(2))
            monitor?.cancel()
        }
        await monitor?.value
        timer.cancel()
        await entry.journal.closeFile()
    }

    public func device(_ devId: String) -> ControlledDevice? { entries[devId] }

    public var all: [ControlledDevice] { order.compactMap { entries[$0] } }

    public var count: Int { order.count }

    /// One page of the devices in registration order, after filtering by devId prefix and call
    /// phase (`idle`, `ringing`...), with the number that matched.
    public func page(offset: Int, limit: Int, prefix: String?, phase: String?) async -> (total: Int, devices: [ControlledDevice]) {
        var matched = 0
        var out: [ControlledDevice] = []
        for devId in order {
            if let prefix, !devId.hasPrefix(prefix) { continue }
            guard let entry = entries[devId] else { continue }
            if let phase, await entry.device.status.phase.rawValue != phase { continue }
            if matched >= offset, out.count < limit { out.append(entry) }
            matched += 1
        }
        return (matched, out)
    }

    /// Stops observing (the devices themselves are stopped by whoever owns them) and closes the
    /// journals.
    public func close() async {
        for entry in all {
            entry.monitorTask?.cancel()
            await entry.journal.closeFile()
        }
        fleetJournal?.close()
    }

    /// After the devices have stopped (their event streams end): waits, at most `timeout`, until
    /// every monitor has written the last events (the calls a shutdown ended) to the journal, then
    /// closes the journals as `close` does.
    public func finish(timeout: Duration) async {
        let monitors = all.compactMap(\.monitorTask)
        let (done, signal) = AsyncStream.makeStream(of: Void.self)
        let drained = Task {
            for monitor in monitors { await monitor.value }
            signal.yield()
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            signal.yield()
        }
        for await _ in done { break }
        timer.cancel()
        drained.cancel()
        await close()
    }

    /// The Prometheus exposition for every device.
    public func metricsText() async -> String {
        var gauges: [ControlMetrics.DeviceGauges] = []
        for entry in all {
            let s = await entry.device.status
            let active = s.session != nil && s.phase != .idle && s.phase != .shutDown
            let linkUp = s.session?.mediaLink == .up
            var g = ControlMetrics.DeviceGauges(
                devId: s.devId, activeCalls: active ? 1 : 0, p2pLinkUp: linkUp,
                mqttReconnects: entry.device.mqttCounters.reconnects, mqttConnected: s.connected,
                framesSent: s.media.framesSent, framesReceived: s.media.framesReceived, fps: s.media.fps,
                refusals: Dictionary(uniqueKeysWithValues: entry.device.refusals.totals.map { ($0.key.rawValue, $0.value) }))
            g.refusalRepliesDropped = Dictionary(uniqueKeysWithValues: entry.device.refusals.droppedReplies.map { ($0.key.rawValue, $0.value) })
            g.journalWriteFailures = await entry.journal.failedWrites
            g.cameraUp = !s.camera.isLost
            g.cameraLosses = s.camera.losses
            g.doorbell = await Self.doorbellGauges(of: entry.device)
            gauges.append(g)
        }
        let fanOut = Self.fanOut(all.map(\.device.feeds))
        return metrics.render(gauges, fanOut: fanOut.statistics, fanOutSubscribers: fanOut.subscribers)
    }

    /// The video fan-outs of the devices' feeds (most share the process's one `VideoFeeds`),
    /// each set of feeds counted once.
    static func fanOut(_ feeds: [VideoFeeds]) -> (statistics: FanOutStatistics, subscribers: Int) {
        var seen = Set<ObjectIdentifier>()
        var sum = FanOutStatistics()
        var subscribers = 0
        for f in feeds where seen.insert(ObjectIdentifier(f)).inserted {
            let (s, n) = f.fanOut
            sum.add(s)
            subscribers += n
        }
        return (sum, subscribers)
    }
}

/// The counters `/metrics` reads (IPCMetrics declares what it needs; the names are the same).
extension FanOutStatistics: VideoFanOutCounts {}

/// One registered device and what the control layer keeps for it.
public final class ControlledDevice: Sendable {
    public let device: Device
    public let journal: CallJournal
    private let monitor = Mutex<Task<Void, Never>?>(nil)

    /// The task turning the device's events into journal lines (set and read by the registry).
    var monitorTask: Task<Void, Never>? {
        get { monitor.withLock { $0 } }
        set { monitor.withLock { $0 = newValue } }
    }

    init(device: Device, journal: CallJournal) {
        self.device = device
        self.journal = journal
    }

    public var devId: String { device.devId }
}

/// Turns one device's events into journal lines, metrics and server-sent events.
struct DeviceMonitor: Sendable {
    let devId: String
    let journal: CallJournal
    let metrics: ControlMetrics
    let hub: EventHub
    /// PROTOCOL.md 8: the device's doorbell kind (nil for `screen_ipc`, whose calls are §3's).
    var doorbellKind: String?
    /// Where the device's left messages are (their duration, for the journal).
    var media: DeviceMediaStore?

    func run(_ events: AsyncStream<DeviceEvent>) async {
        var callReceivedAt: [String: Int64] = [:]
        for await event in events {
            let now = WallClock.nowMs()
            switch event {
            case .received(let m):
                await journal.record(direction: .in, message: m, at: now)
                if m.event == .call { callReceivedAt[m.sessionId] = now }
            case .sent(let m):
                await journal.record(direction: .out, message: m, at: now)
                if m.event == .ring, let t = callReceivedAt.removeValue(forKey: m.sessionId) {
                    metrics.observeRingLatency(device: devId, seconds: Double(now - t) / 1000)
                }
            case .callEnded(let record):
                if let kind = doorbellKind {
                    await journal.record(endedDoorbell: record, kind: kind, at: now)
                } else {
                    await journal.record(ended: record, at: now)
                }
                metrics.callEnded(device: devId, record: record)
                callReceivedAt.removeValue(forKey: record.sessionId)
            case .connection, .ringing, .ringingStopped, .refused, .offerRefused:
                break
            case .receivedDoorbell, .sentDoorbell, .pressed, .dataPointsReported, .fellAsleep, .wokeUp, .mediaStored:
                await journalDoorbell(event, at: now)
            }
            hub.publish(APIViews.event(event, devId: devId, at: now), device: devId)
        }
    }
}
