import IPCWire

/// The data points of PROTOCOL.md 8.3's table, in id order. `DeviceProfile.DataPoints.known` lists
/// the same ids with the same codes (the profile validates a `dps` list against it).
public enum DataPointCatalogue {
    /// DP 149: awake (8.4). The app may only set it to true (a wake).
    public static let awake: DPId = 149
    /// DP 145: battery percent (8.4).
    public static let battery: DPId = 145
    /// DP 146: power source, "0" battery, "1" adapter.
    public static let powerMode: DPId = 146
    /// DP 147: the low-battery alarm threshold (8.4).
    public static let lowBatteryThreshold: DPId = 147
    /// DP 136: unix seconds of the last press, as a string (8.1).
    public static let doorbellActive: DPId = 136
    /// DP 154: the snapshot of the last press (8.5).
    public static let doorbellPicture: DPId = 154
    /// DP 115: a motion snapshot (8.5).
    public static let motionPicture: DPId = 115
    /// DP 185: the doorbell alarm (8.1).
    public static let alarmMessage: DPId = 185
    /// DP 212: alerts (`ipc_motion`, `ipc_doorbell`, `ipc_leave_msg`, `ipc_low_battery`).
    public static let initiativeMessage: DPId = 212

    public static let all: [DPDefinition] = [
        DPDefinition(id: 115, code: "movement_detect_pic", type: .raw, access: .readOnly, defaultValue: .string("")),
        DPDefinition(id: 134, code: "motion_switch", type: .bool, access: .readWrite, defaultValue: .bool(true)),
        DPDefinition(id: 136, code: "doorbell_active", type: .string(maxLength: 20), access: .readOnly,
                     defaultValue: .string("0")),
        DPDefinition(id: 145, code: "wireless_electricity", type: .int(0...100), access: .readOnly,
                     defaultValue: .int(100)),
        DPDefinition(id: 146, code: "wireless_powermode", type: .enumeration(["0", "1"]), access: .readOnly,
                     defaultValue: .string("1")),
        DPDefinition(id: 147, code: "wireless_lowpower", type: .int(0...100), access: .readWrite,
                     defaultValue: .int(20)),
        DPDefinition(id: 149, code: "wireless_awake", type: .bool, access: .readWrite, defaultValue: .bool(true)),
        DPDefinition(id: 150, code: "record_switch", type: .bool, access: .readWrite, defaultValue: .bool(true)),
        DPDefinition(id: 151, code: "record_mode", type: .enumeration(["1", "2"]), access: .readWrite,
                     defaultValue: .string("1")),
        DPDefinition(id: 154, code: "doorbell_pic", type: .raw, access: .readOnly, defaultValue: .string("")),
        DPDefinition(id: 185, code: "alarm_message", type: .raw, access: .readOnly, defaultValue: .string("")),
        DPDefinition(id: 212, code: "initiative_message", type: .raw, access: .readOnly, defaultValue: .string("")),
    ]

    /// Every id, ascending.
    public static var ids: [DPId] { all.map(\.id) }

    public static func definition(_ id: DPId) -> DPDefinition? { all.first { $0.id == id } }
}
