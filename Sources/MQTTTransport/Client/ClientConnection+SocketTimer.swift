import CMosquitto
#if canImport(Glibc)
import Glibc
#endif

/// The open socket's own timer (`ConnectionAttempt.deadline`): the CONNACK timeout, then the
/// keepalive checks. It is one of the client's deadlines in its loop's heap (DESIGN.md "Scale": one
/// timer structure per loop), so the loop visits a client only when its timer is due, never in a
/// pass over every client (docs/fleet.md "No pass over every client").
///
/// Keepalive is libmosquitto's (`mosquitto_loop_misc`): it sends PINGREQ once `keepAlive` seconds
/// (whole seconds of CLOCK_MONOTONIC) passed since the last packet out or the last packet in, and
/// closes the socket (`keepalive timeout (no PINGRESP)`) when that time comes again with the
/// PINGREQ unanswered. What it counts is not visible from outside, so the checks are placed where
/// it can next be due:
/// - `keepAlive` seconds after the CONNACK (nothing can be due earlier: the connect reset both times);
/// - `keepAlive` seconds after a check that sent a PINGREQ (it reset both times to then: the next
///   PINGREQ, or the PINGRESP's deadline, is due exactly then);
/// - one second after a check that found nothing due (packets went both ways meanwhile; libmosquitto's
///   clock has whole seconds, so it cannot be due earlier): as precise as the pass over every client
///   was, for the clients that are busy.
/// An idle connection is so visited once per keepalive interval, not once a second; a reconnected
/// client not before `keepAlive` seconds (so a reconnect storm has no keepalive visits at all).
extension ClientConnection {
    /// Seconds after a keepalive check that found nothing due.
    static let keepaliveRecheckInterval = 1.0

    /// The first keepalive check of a connection the broker just accepted (nil: keepalive off).
    func firstKeepaliveCheck() -> Double? {
        let keepAlive = settings.options.keepAlive
        guard keepAlive > 0 else { return nil }
        return monotonicSeconds() + Double(keepAlive)
    }

    /// The socket's timer is due (mutex held, loop thread): before the CONNACK the attempt times
    /// out, after it the keepalive check runs.
    func socketTimerFired(_ mosq: OpaquePointer, now: Double) {
        guard let attempt = lifecycle.attempt else { return }
        let fd = mosquitto_socket(mosq)
        guard fd >= 0 else {
            lifecycle.updateAttempt { $0.deadline = nil }  // closed: the disconnect callback takes over
            return
        }
        if attempt.acknowledged {
            checkKeepalive(mosq, now: now)
        } else {
            connectTimedOut(mosq, fd: fd, now: now)
        }
    }

    /// No CONNACK in time: the socket is shut and read, so libmosquitto sees it end and closes it;
    /// the disconnect callback then reports this reason and schedules the retry.
    private func connectTimedOut(_ mosq: OpaquePointer, fd: Int32, now: Double) {
        let timeout = settings.options.connectTimeout
        let reason = "no CONNACK within \(timeout) s: \(settings.options.endpointDescription)"
        lifecycle.updateAttempt {
            $0.closingReason = reason
            $0.deadline = now + Self.keepaliveRecheckInterval  // should the socket outlive the shutdown
        }
        _ = shutdown(fd, Int32(SHUT_RDWR))
        if mosquitto_want_write(mosq) { _ = mosquitto_loop_write(mosq, 1) }
        if mosquitto_socket(mosq) >= 0 { readAvailable(mosq) }
    }

    /// `mosquitto_loop_misc`, told whether it sent a PINGREQ: its debug log line says so, so the log
    /// callback is set for this call only (`mqttKeepaliveLogCallback` sets the next check). If it
    /// closed the socket (PINGRESP missing), its disconnect callback has ended the attempt.
    private func checkKeepalive(_ mosq: OpaquePointer, now: Double) {
        lifecycle.updateAttempt { $0.deadline = now + Self.keepaliveRecheckInterval }
        mosquitto_log_callback_set(mosq, mqttKeepaliveLogCallback)
        _ = mosquitto_loop_misc(mosq)
        mosquitto_log_callback_set(mosq, nil)
    }

    /// libmosquitto sent a PINGREQ (inside `checkKeepalive`): the next PINGREQ, or the PINGRESP's
    /// deadline, is due `keepAlive` seconds from now.
    func librarySentPing() {
        let next = monotonicSeconds() + Double(settings.options.keepAlive)
        lifecycle.updateAttempt { $0.deadline = next }
    }
}
