import CallEngine
import Foundation
import Synchronization
import IPCWire

/// Counts refused messages by kind and rate-limits their log lines (issue 10, hostile peers): a
/// flood of thousands of bad messages a second costs a counter increment each, and at most
/// `linesPerWindow` log lines per window; the next line that is written says how many were not.
/// The counts are what `/metrics` exposes. Thread-safe; read without hopping onto the device actor.
public final class RefusalLog: Sendable {
    /// What a refused message was, for the counters (`ipcemu_refused_messages_total{kind}`).
    public enum Kind: String, Sendable, CaseIterable {
        /// Not a message of PROTOCOL.md: bad JSON, a missing or mistyped field, an unknown event.
        case malformed
        /// Over 64 KiB (PROTOCOL.md 1).
        case tooLarge = "too_large"
        /// pv2.x: wrong key, tampered, bad frame.
        case unauthenticated
        /// pv2.x: seq not above the last accepted, or a first message with a stale envelope time.
        case replayed
        /// Refused by the call engine (PROTOCOL.md 3.4: invalid_params, expired, undefined_session, ...).
        case call
        /// A 302 offer refused (PROTOCOL.md 4, who may open a link), or a signal for no link.
        case signal
        /// Addressed to another device or user.
        case notForUs = "not_for_us"
        /// PROTOCOL.md 8.3: DPs of a protocol 5 not applied (read-only, wrong type, out of range,
        /// not on the device).
        case dataPoint = "data_point"
        /// PROTOCOL.md 8.4: dropped while the device sleeps.
        case asleep
        /// PROTOCOL.md 8.4: a payload on the wake topic that is not the CRC32 of the localKey.
        case wake
        /// PROTOCOL.md 8.6: a 312 refused (no such link, another user, a stream it lacks).
        case streamControl = "stream_control"
    }

    public let linesPerWindow: Int
    public let windowMs: Int64
    private let state = Mutex(State())

    private struct State {
        var counts: [Kind: Int] = [:]
        var windowStart: Int64 = .min
        var linesInWindow = 0
        var suppressed = 0
        var repliesDropped: [RefusalReplyLimiter.Scope: Int] = [:]
    }

    public init(linesPerWindow: Int = 20, windowMs: Int64 = 1000) {
        self.linesPerWindow = max(1, linesPerWindow)
        self.windowMs = max(1, windowMs)
    }

    /// Counts one refusal at `nowMs`. Returns whether to write its line, and how many lines were
    /// suppressed since the last one written (to say so on this one).
    public func record(_ kind: Kind, nowMs: Int64) -> (log: Bool, suppressed: Int) {
        state.withLock { s in
            s.counts[kind, default: 0] += 1
            let (elapsed, overflow) = nowMs.subtractingReportingOverflow(s.windowStart)
            if overflow || elapsed >= windowMs || elapsed < 0 {
                s.windowStart = nowMs
                s.linesInWindow = 0
            }
            guard s.linesInWindow < linesPerWindow else {
                s.suppressed += 1
                return (false, 0)
            }
            s.linesInWindow += 1
            defer { s.suppressed = 0 }
            return (true, s.suppressed)
        }
    }

    /// PROTOCOL.md 3.4: a reply to a refused message was dropped by the `scope` limit (issue 23).
    public func replyDropped(_ scope: RefusalReplyLimiter.Scope) {
        state.withLock { $0.repliesDropped[scope, default: 0] += 1 }
    }

    /// Replies to refused messages dropped so far, by the limit that dropped them (every scope
    /// present, 0 when none): `/metrics` `ipcemu_refusal_replies_dropped_total{scope}`.
    public var droppedReplies: [RefusalReplyLimiter.Scope: Int] {
        state.withLock { s in
            Dictionary(uniqueKeysWithValues: RefusalReplyLimiter.Scope.allCases.map { ($0, s.repliesDropped[$0] ?? 0) })
        }
    }

    /// Refusals so far, by kind (every kind present, 0 when none).
    public var totals: [Kind: Int] {
        state.withLock { s in Dictionary(uniqueKeysWithValues: Kind.allCases.map { ($0, s.counts[$0] ?? 0) }) }
    }

    /// Lines not written since the last one that was (a quiet period ends with them untold until
    /// the next refusal; `totals` has them all).
    public var pendingSuppressed: Int { state.withLock { $0.suppressed } }
}

extension RefusalLog.Kind {
    /// The kind of a wire-level refusal (opening or decoding a payload).
    public init(_ error: WireError) {
        switch error {
        case .payloadTooLarge: self = .tooLarge
        case .replayed, .staleEnvelope: self = .replayed
        case .headerTooShort, .wrongVersionPrefix, .checksumMismatch, .authenticationFailed, .decryptionFailed,
             .invalidKey, .wrongKey, .sealingFailed, .sequenceExhausted:
            self = .unauthenticated
        case .malformedJSON, .missingField, .wrongType, .invalidValue, .unknownEvent, .unknownProtocol:
            self = .malformed
        }
    }
}
