import CallEngine
import IPCWire

/// Which outcomes and SDK errors PROTOCOL.md allows, for one view and for a pair of views of the
/// same call (the device's record and one app's). A pair is checked only for a call no fault
/// touched (every message arrived once, no link failure, no disconnect or clock jump on either
/// side): then whoever ended the call first decided, and the other side saw exactly that. A call a
/// fault touched may end differently on the two sides (a lost `hang_up` becomes the device's
/// `heartbeat_timeout`); each view must still be one PROTOCOL.md 3.5 allows on its own.
enum OutcomeRules {
    /// PROTOCOL.md 3.5 for one app view: the SDK error matches how the call ended. Nil when fine,
    /// else what is wrong.
    static func appViewProblem(_ r: CallRecord) -> String? {
        let expected: Set<SDKError?>
        switch (r.endedBy, r.outcome) {
        case (.local, .notAnswered): expected = [.timeout]
        case (.local, .stopped):
            expected = r.reason == .heartbeatTimeout ? [.disconnect] : [nil]
        case (.local, _): expected = [nil]
        case (.remote, .rejected): expected = [.rejected]
        case (.remote, .busy): expected = [.peerBusy]
        case (.remote, .notAnswered): expected = [.notAnswered, .timeout]
        case (.remote, .hungUp): expected = [.peerHungUp]
        case (.remote, .cancelled): expected = [.cancelled]
        case (.remote, .answeredElsewhere): expected = [.answeredByOthers]
        case (.remote, .rejectedElsewhere): expected = [.rejectedByOthers]
        case (.remote, .stopped): expected = [SDKError.forStop(reason: r.remoteReason)]
        }
        guard expected.contains(r.sdkError) else {
            return "app \(r.localId) ended \(describe(r)) with SDK error \(r.sdkError.map { "\($0.rawValue)" } ?? "none")"
        }
        return nil
    }

    /// A device view never carries an SDK error.
    static func deviceViewProblem(_ r: CallRecord) -> String? {
        r.sdkError == nil ? nil : "device \(r.localId) record carries SDK error \(r.sdkError.map { "\($0.rawValue)" } ?? "")"
    }

    /// The pair (device view, app view) of a clean call. Nil when PROTOCOL.md allows it.
    static func pairProblem(device d: CallRecord, app a: CallRecord, kind: CallKind) -> String? {
        let ok: Bool
        switch (d.endedBy, a.endedBy) {
        case (.local, .local):
            // Both decided before hearing the other (a crossing): each side's own decision stands.
            ok = true
        case (.remote, .remote):
            // Each ended on the other's message, yet neither ended first: only another target's
            // doing can explain the app's side (already_answered / already_rejected / the doorbell's
            // `answered`, or a doorbell ring every user declined).
            ok = a.outcome == .answeredElsewhere || a.outcome == .rejectedElsewhere
                || (kind == .doorbell && a.outcome == .notAnswered && d.outcome == .rejected)
        case (.local, .remote):
            ok = appSaw(a, deviceEnded: d, kind: kind)
        case (.remote, .local):
            // The device ended on an app's message: this app's, or (several targets) another's.
            ok = kind != .appCallsDevice || mirrors(local: a, remote: d)
        }
        return ok ? nil : "device \(d.localId) ended \(describe(d)) but app \(a.localId) ended \(describe(a)) (\(kind))"
    }

    /// The app's remote ending, given the device ended the call itself.
    private static func appSaw(_ a: CallRecord, deviceEnded d: CallRecord, kind: CallKind) -> Bool {
        switch a.outcome {
        case .answeredElsewhere:
            return d.answeredBy != nil && d.answeredBy != a.localId
        case .rejectedElsewhere:
            return false  // the device sends already_rejected only after a target's reject (remote)
        default:
            if kind == .doorbell, a.outcome == .notAnswered {
                // 8.2: the device's `timeout` to everyone after its ring timeout.
                return d.answeredBy == nil && d.outcome == .notAnswered
            }
            if kind != .appCallsDevice, let answerer = d.answeredBy, answerer != a.localId {
                return false  // a target that lost to another's answer hears already_answered only
            }
            return mirrors(local: d, remote: a)
        }
    }

    /// The side that ended on the other's message saw what the other side did.
    private static func mirrors(local l: CallRecord, remote r: CallRecord) -> Bool {
        switch l.outcome {
        case .rejected: return r.outcome == .rejected
        case .busy: return r.outcome == .busy
        case .cancelled: return r.outcome == .cancelled
        case .notAnswered: return r.outcome == .notAnswered
        case .hungUp:
            // A doorbell operator's hang-up is a `stop` without reason (8.2): the app hears hung up.
            return r.outcome == .hungUp || (r.outcome == .stopped && r.reason == l.reason)
        case .stopped:
            // §3.3: the stop's reason travels; the doorbell records the accepting user's stop as
            // hung up with that reason.
            return (r.outcome == .stopped || r.outcome == .hungUp) && r.reason == l.reason
        case .answeredElsewhere, .rejectedElsewhere:
            return false
        }
    }

    static func describe(_ r: CallRecord) -> String {
        var text = "\(r.outcome.rawValue)/\(r.endedBy.rawValue)"
        if let reason = r.reason { text += "/\(reason.rawValue)" }
        if let e = r.sdkError { text += "/\(e.rawValue)" }
        return text
    }
}

/// Which protocol a call follows.
enum CallKind: String, Sendable {
    /// PROTOCOL.md 3.1: an app's `startCall`.
    case appCallsDevice
    /// PROTOCOL.md 3.2: a screen_ipc device's press calls its household.
    case deviceCallsApps
    /// PROTOCOL.md 8: a doorbell press (43), answered with `video_doorbell`.
    case doorbell
}
