import CMosquitto

/// Waiting for an acknowledgement, the connection or the disconnect. A waiter is a continuation in
/// the client's `WaiterTable` with a deadline; the client's loop thread resumes it at the deadline
/// through the worker's one deadline heap (`nextDeadline`), so a wait costs no task and no sleep
/// (docs/fleet.md "Memory per device": a fleet's 10,000 devices each wait for a SUBACK at once).
extension ClientConnection {
    func publishAcknowledged(
        topic: String, payload: [UInt8], qos: Int, retain: Bool, timeout: Duration
    ) async -> Result<Void, MQTTError> {
        await wait(timeout: timeout, for: .puback(topic: topic)) { (mosq, token, table) throws(MQTTError) in
            let mid = try publishLocked(mosq, topic: topic, payload: payload, qos: qos, retain: retain)
            guard qos > 0 else { return true }
            table.pubacks[mid, default: []].append(token)
            return false
        }
    }

    /// Subscribes (now if connected, else after the next CONNACK) and waits for the SUBACK. A
    /// SUBSCRIBE of the same filter already unanswered (the one every reconnect sends) is not
    /// sent again: its SUBACK answers this wait too.
    func subscribeAcknowledged(_ filter: String, qos: Int, timeout: Duration) async -> Result<Void, MQTTError> {
        await wait(timeout: timeout, for: .suback(filter: filter)) { (mosq, token, table) throws(MQTTError) in
            try subscribeLocked(mosq, filter: filter, qos: qos, joiningUnanswered: true)
            table.subacks[filter, default: []].append(token)
            return false
        }
    }

    func waitUntilConnected(timeout: Duration) async -> Bool {
        let result = await wait(timeout: timeout, for: .connection) { (_, token, table) throws(MQTTError) in
            if state == .connected { return true }
            table.connected.append(token)
            return false
        }
        return (try? result.get()) != nil
    }

    func disconnectAndWait(timeout: Duration) async -> Bool {
        let result = await wait(timeout: timeout, for: .disconnect) { (mosq, token, table) throws(MQTTError) in
            lifecycle.unwant()
            worker.post { [self] in self.disconnectOnLoop() }
            guard let mosq, mosquitto_socket(mosq) >= 0 else { return true }
            table.closed.append(token)
            return false
        }
        return (try? result.get()) != nil
    }

    /// Registers a waiter with the mutex held (`register` returns true when already satisfied),
    /// then waits for it to be resumed, or for its deadline. When the client's next deadline
    /// changed (the waiter's, or one `register` set), the loop thread is asked to take it.
    func wait(
        timeout: Duration, for subject: WaitSubject,
        register: (OpaquePointer?, UInt64, WaiterTable) throws(MQTTError) -> Bool
    ) async -> Result<Void, MQTTError> {
        await withCheckedContinuation { (continuation: WaitContinuation) in
            let deadline = monotonicSeconds() + timeout.clampedSeconds
            let outcome = locked { (mosq) -> Result<(token: UInt64, changed: Bool)?, MQTTError> in
                let before = nextDeadline
                let table = waiterTable()
                let token = table.nextToken()
                do throws(MQTTError) {
                    if try register(mosq, token, table) {
                        releaseWaitersIfEmpty()
                        return .success(nil)
                    }
                } catch {
                    releaseWaitersIfEmpty()
                    return .failure(error)
                }
                table.waiting[token] = Waiter(continuation: continuation, deadline: deadline, subject: subject)
                if waitDeadline.map({ deadline < $0 }) ?? true { waitDeadline = deadline }
                return .success((token, nextDeadline != before))
            }
            switch outcome {
            case .failure(let error):
                continuation.resume(returning: .failure(error))
            case .success(nil):
                continuation.resume(returning: .success(()))
            case .success(let waiting?):
                // The loop thread puts the new earliest deadline in its heap. A stopped loop will
                // never time it out (nor resume it): it fails now.
                if waiting.changed, !worker.post({ [self] in self.loopLocked { _ in } }) {
                    locked { _ in resume(waiting.token, .failure(.closed)) }
                }
            }
        }
    }

    // MARK: With the mutex held

    /// The waiter table, made if there is none.
    func waiterTable() -> WaiterTable {
        if let waiters { return waiters }
        let made = WaiterTable()
        waiters = made
        return made
    }

    /// Drops the table once nothing is left in it (an idle client holds none).
    func releaseWaitersIfEmpty() {
        if let waiters, waiters.isEmpty { self.waiters = nil }
    }

    /// Resumes a waiter (after unlock) if it has not timed out already.
    func resume(_ token: UInt64, _ result: Result<Void, MQTTError>) {
        guard let table = waiters else { return }
        if let waiter = table.waiting.removeValue(forKey: token) {
            outbox.append(.resume(waiter.continuation, result))
        }
        releaseWaitersIfEmpty()
    }

    /// Times out the waiters whose deadline is `now` or past; the next deadline is the earliest
    /// left (loop thread, from `timerFired`).
    func expireWaiters(now: Double) {
        guard let table = waiters else {
            waitDeadline = nil
            return
        }
        let expired = table.waiting.filter { $0.value.deadline <= now }
        for (token, waiter) in expired { resume(token, .failure(.timedOut(waiter.subject.description))) }
        waitDeadline = waiters?.earliestDeadline
    }

    func failAllWaiters(_ error: MQTTError) {
        for (_, waiter) in waiters?.waiting ?? [:] {
            outbox.append(.resume(waiter.continuation, .failure(error)))
        }
        waiters = nil
        waitDeadline = nil
    }
}
