import IPCWire

/// The wake topic of PROTOCOL.md 8.4: "a publish on topic `m/w/{devId}` whose payload is the
/// 4-byte big-endian CRC32 (§2.1's) of the localKey (what go2rtc sends) ... Any other payload on
/// `m/w/{devId}` is ignored and counted."
public enum WakeCheck {
    /// The wake topic of a device.
    public static func topic(devId: String) -> String { "m/w/\(devId)" }

    /// The payload that wakes the device with this localKey: CRC32 of its 16 bytes, big-endian.
    public static func payload(localKey: some Sequence<UInt8>) -> [UInt8] {
        let crc = CRC32.checksum(localKey)
        return [UInt8(truncatingIfNeeded: crc >> 24), UInt8(truncatingIfNeeded: crc >> 16),
                UInt8(truncatingIfNeeded: crc >> 8), UInt8(truncatingIfNeeded: crc)]
    }

    /// True when `payload` is exactly the wake payload for `localKey` (any other length or value:
    /// false, to be counted).
    public static func isWake(_ payload: some Collection<UInt8>, localKey: some Sequence<UInt8>) -> Bool {
        payload.count == 4 && Array(payload) == self.payload(localKey: localKey)
    }
}
