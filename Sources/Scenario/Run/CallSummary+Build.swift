import CallEngine
import Foundation
import IPCWire

extension CallSummary {
    /// One summary per (device, session) that saw 308 messages, in start order.
    static func build(from observations: [Observation]) -> [CallSummary] {
        var order: [String] = []
        var groups: [String: [Observation]] = [:]
        for o in observations {
            guard let s = o.session else { continue }
            let key = o.device + "\u{0}" + s
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(o)
        }
        return order.compactMap { key -> CallSummary? in
            guard let obs = groups[key], let first = obs.first, let session = first.session else { return nil }
            let messages = obs.compactMap { o -> (Date, CallMessage, MessageDirection)? in
                o.message.map { (o.time, $0.0, $0.1) }
            }
            // PROTOCOL.md 8.2: a doorbell call's messages are `video_doorbell` ones.
            let doorbell = obs.compactMap { o -> (Date, VideoDoorbellMessage, MessageDirection)? in
                if case .doorbell(.message(let m, let d)) = o.kind { (o.time, m, d) } else { nil }
            }
            guard !messages.isEmpty || !doorbell.isEmpty else { return nil }
            let start = obs.map(\.time).min() ?? first.time
            let ring = messages.first { $0.1.event == .ring }
            let answer = messages.first { $0.1.event == .answer }.map { ($0.0, ()) }
                ?? doorbell.first { $0.1.event == .answered && $0.2 == .sent }.map { ($0.0, ()) }
            var firstFrameMs: Double?
            if let answer {
                let firstVideo = obs.first { o in
                    if case .video(_, _, let frames, _) = o.kind { frames > 0 } else { false }
                }
                // The sampler runs every 500 ms: an upper bound, used when no expectation measured it.
                firstFrameMs = firstVideo.map { $0.time.timeIntervalSince(answer.0) * 1000 }
            }
            var parties = [first.device]
            for (_, m, d) in messages {
                let u = d == .sent ? m.targetId : m.curId
                if !parties.contains(u) { parties.append(u) }
            }
            for o in obs {
                if case .offerRefused(_, let from, _) = o.kind, !parties.contains(from) { parties.append(from) }
            }
            for (_, m, _) in doorbell {
                let u = m.uid ?? "household"
                if !parties.contains(u) { parties.append(u) }
            }
            let ended = obs.compactMap { o -> CallRecord? in
                if case .deviceEnded(let r) = o.kind { r } else { nil }
            }.first
            return CallSummary(device: first.device, session: session, start: start, observations: obs.sorted { $0.time < $1.time },
                               ringLatency: ring.map { $0.0.timeIntervalSince(start) },
                               answerLatency: answer.map { $0.0.timeIntervalSince(start) },
                               firstFrameMs: firstFrameMs, ended: ended, parties: parties)
        }
    }
}
