/// Push faults from the control API (PROTOCOL.md 8.8: "Faults from the control API: push delay
/// (seconds) and push loss (share)"), on the device's `PushSender`.
extension Device {
    /// True when the device sends pushes (its profile has `push.url` or `push.apnsDir`).
    public nonisolated var sendsPushes: Bool { pushes != nil }

    /// The push faults in force (nil when the device sends no pushes).
    public func pushFaults() async -> PushFaults? { await pushes?.faults }

    /// Sets the push faults; false when the device sends no pushes. Throws `PushFaultError` naming
    /// the field out of range, changing nothing.
    @discardableResult
    public func setPushFaults(_ faults: PushFaults) async throws(PushFaultError) -> Bool {
        guard let pushes else { return false }
        try await pushes.setFaults(faults)
        return true
    }
}
