import CMosquitto

/// A clean goodbye (`MQTTClient.publishThenDisconnect`): one last message (a device's retained
/// offline status), then DISCONNECT once the broker has acknowledged it, sent by the loop thread
/// at the PUBACK. Starting it waits for nothing and posts nothing to the loop thread; the owner
/// waits once, for the socket to close. Before, a device going offline waited for the PUBACK and
/// then for the close (two waits, two hops back to its task) and posted the DISCONNECT to the
/// loop thread in between (docs/fleet.md "100,000 devices on one host": SIGTERM sends a whole
/// fleet offline at once).
extension ClientConnection {
    /// Publishes `last` (if given; on the calling thread, as `publish` does) and stops wanting a
    /// connection. On a connected client with a QoS 1 or 2 message, DISCONNECT follows its PUBACK,
    /// or comes `acknowledgement` after without it (the loop takes that deadline into its heap at
    /// its next turn, within a second: `postLazily`, no wake-up per device); otherwise it is
    /// posted at once.
    func beginGoodbye(_ last: MQTTMessage?, acknowledgement: Duration) {
        var deadlineSet = false
        let posting = locked { (mosq) -> Bool in
            let acknowledged = lifecycle.attempt?.acknowledged ?? false
            lifecycle.unwant()
            var mid: Int32 = 0
            if let last, let mosq {
                // Not connected: QoS 1 is queued as by `publish` (and dropped with the handle).
                mid = (try? publishLocked(mosq, topic: last.topic, payload: last.payload, qos: last.qos,
                                          retain: last.retain)) ?? 0
            }
            guard let mosq, mosquitto_socket(mosq) >= 0, acknowledged, mid != 0, (last?.qos ?? 0) > 0 else {
                return mosq != nil
            }
            goodbyeMid = mid
            goodbyeDeadline = monotonicSeconds() + acknowledgement.clampedSeconds
            deadlineSet = true
            return false
        }
        if posting {
            worker.post { [self] in self.disconnectOnLoop() }
        } else if deadlineSet {
            worker.postLazily { [self] in self.rescheduleOnLoop() }
        }
    }

    /// Gives the loop's heap this client's nearest deadline again (loop thread): `loopLocked`
    /// re-syncs the client with its worker on the way out, and nothing else is done.
    private func rescheduleOnLoop() {
        loopLocked { _ in }
    }

    /// Waits until the socket is closed (at once when there is none): true, or false after
    /// `timeout`.
    func waitUntilClosed(timeout: Duration) async -> Bool {
        let result = await wait(timeout: timeout, for: .disconnect) { (mosq, token, table) throws(MQTTError) in
            guard let mosq, mosquitto_socket(mosq) >= 0 else { return true }
            table.closed.append(token)
            return false
        }
        return (try? result.get()) != nil
    }

    /// The goodbye's PUBACK came or its deadline passed (mutex held, loop thread): `loopLocked`
    /// sends DISCONNECT after the current read.
    func goodbyeIsDue() {
        goodbyeMid = 0
        goodbyeDeadline = nil
        goodbyeDue = true
    }

    /// The socket closed or the handle is freed: no goodbye is pending any more.
    func forgetGoodbye() {
        goodbyeMid = 0
        goodbyeDeadline = nil
        goodbyeDue = false
    }
}
