import DeviceProfile
import Dispatch
import Synchronization
import WebRTCLink

/// The device pipelines built while calls ring (issue 24 item 6): one `PreparedAnswerer` per
/// ringing call, waiting for the call's offer (`take`), closed when the call ends without one
/// (`discard`: rejected, cancelled, timed out, hung up) or after `lifetime` at the latest. A few at
/// a time: a fleet ringing thousands of calls prepares none past `limit`, and nothing goes on the
/// wire before the offer (PROTOCOL.md 4).
final class PreparedAnswers: Sendable {
    private enum Entry {
        /// Being built on the background queue; `discarded` once the call ended meanwhile.
        case building(discarded: Bool)
        case ready(PreparedAnswerer)
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var built = 0
        var used = 0
        var discarded = 0
    }

    private let state = Mutex(State())
    /// At most this many prepared (or being prepared) at once.
    let limit: Int
    /// A prepared pipeline nobody took or discarded is closed after this long.
    let lifetime: Duration
    private let queue = DispatchQueue(label: "ipcemu.prepared-answers")

    init(limit: Int = 4, lifetime: Duration = .seconds(40)) {
        self.limit = limit
        self.lifetime = lifetime
    }

    private static func key(devId: String, sessionId: String) -> String { devId + "\u{1F}" + sessionId }

    /// Builds, in the background, what the answer to this call's offer will most likely need: the
    /// main stream's H.264 sent as access units, the profile's sound, the options every device
    /// link uses.
    func prepare(profile: DeviceProfile, devId: String, sessionId: String) {
        guard profile.capabilities.video != nil else { return }
        let key = Self.key(devId: devId, sessionId: sessionId)
        let admitted: Bool = state.withLock { s in
            guard s.entries[key] == nil, s.entries.count < limit else { return false }
            s.entries[key] = .building(discarded: false)
            return true
        }
        guard admitted else { return }
        let (_, output) = P2PLink.feedRequest(profile: profile, stream: .main)
        let media = SendMedia(video: output, videoInput: .h264AccessUnits)
        let devices = LocalMediaDevices(profile: profile, sessionId: sessionId)
        queue.async { [self] in
            let prepared = try? PreparedAnswerer(media: media, options: P2PLink.linkOptions(iceServers: []), devices: devices)
            let keep: Bool = state.withLock { s in
                guard case .building(discarded: false) = s.entries[key], let prepared else {
                    s.entries[key] = nil
                    return false
                }
                s.entries[key] = .ready(prepared)
                s.built += 1
                return true
            }
            guard let prepared else { return }
            guard keep else {
                prepared.close()
                return
            }
            queue.asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: lifetime.nanosecondsValue))) { [weak self, weak prepared] in
                guard let self, let prepared else { return }
                self.expire(key: key, prepared: prepared)
            }
        }
    }

    /// The pipeline prepared for this call, if it is ready (it leaves the store; the answerer that
    /// gets it uses it if it fits the offer, else closes it). nil while it is still being built
    /// (the build then closes it).
    func take(devId: String, sessionId: String) -> PreparedAnswerer? {
        let key = Self.key(devId: devId, sessionId: sessionId)
        return state.withLock { s in
            switch s.entries[key] {
            case .ready(let prepared):
                s.entries[key] = nil
                s.used += 1
                return prepared
            case .building:
                s.entries[key] = .building(discarded: true)
                return nil
            case nil:
                return nil
            }
        }
    }

    /// The call ended: its prepared pipeline, if still waiting, is closed.
    func discard(devId: String, sessionId: String) {
        let key = Self.key(devId: devId, sessionId: sessionId)
        let prepared: PreparedAnswerer? = state.withLock { s in
            switch s.entries[key] {
            case .ready(let prepared):
                s.entries[key] = nil
                s.discarded += 1
                return prepared
            case .building:
                s.entries[key] = .building(discarded: true)
                s.discarded += 1
                return nil
            case nil:
                return nil
            }
        }
        prepared?.close()
    }

    private func expire(key: String, prepared: PreparedAnswerer) {
        let mine: Bool = state.withLock { s in
            guard case .ready(let current) = s.entries[key], current === prepared else { return false }
            s.entries[key] = nil
            s.discarded += 1
            return true
        }
        if mine { prepared.close() }
    }

    /// Waiting (or being built), and over the process's life: built, used by an offer, discarded.
    var counts: (waiting: Int, built: Int, used: Int, discarded: Int) {
        state.withLock { ($0.entries.count, $0.built, $0.used, $0.discarded) }
    }
}
