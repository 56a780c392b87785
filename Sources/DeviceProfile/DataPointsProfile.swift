import IPCWire

// The profile's `dps` list (PROTOCOL.md 8.3): which data points the device has, and their starting
// values from the rest of the profile.

extension DeviceProfile {
    /// The data points a device has (PROTOCOL.md 8.3).
    public struct DataPoints: Sendable, Equatable {
        /// DP ids, ascending. Default: every DP of 8.3's table for the Tuya doorbell kinds, none
        /// for `screen_ipc` (`DataPoints.defaults(for:)`; the parser applies it).
        public var ids: [DPId]

        public init(ids: [DPId] = []) { self.ids = ids.sorted() }

        /// The DPs of PROTOCOL.md 8.3's table by id, with their codes. The call engine's
        /// `DataPointCatalogue` holds the same ids with their types; a test keeps the two equal.
        public static let known: [DPId: String] = [
            115: "movement_detect_pic", 134: "motion_switch", 136: "doorbell_active", 145: "wireless_electricity",
            146: "wireless_powermode", 147: "wireless_lowpower", 149: "wireless_awake", 150: "record_switch",
            151: "record_mode", 154: "doorbell_pic", 185: "alarm_message", 212: "initiative_message",
        ]

        /// Every known id, ascending.
        public static var allKnownIds: [DPId] { known.keys.sorted() }

        public static func defaults(for kind: Doorbell.Kind) -> DataPoints {
            kind.isTuyaDoorbell ? DataPoints(ids: allKnownIds) : DataPoints()
        }

        public func has(_ id: DPId) -> Bool { ids.contains(id) }
    }

    /// The starting values the profile gives its DPs (PROTOCOL.md 8.3, 8.4): DP 145 `power.battery`,
    /// DP 146 `power.source`, DP 147 `power.lowBatteryThreshold`, DP 149 awake (true: a device
    /// starts awake). Only DPs the device has; the other DPs start at the catalogue's defaults.
    public var dataPointStartValues: [DPId: DPValue] {
        var values: [DPId: DPValue] = [
            145: .int(Int64(power.battery)),
            146: .string(power.source.dpValue),
            147: .int(Int64(power.lowBatteryThreshold)),
            149: .bool(true),
        ]
        for id in values.keys where !dataPoints.has(id) { values[id] = nil }
        return values
    }
}

// MARK: - Parsing

extension ProfileParser {
    /// `kind` and `power` are nil when their sections had a mistake: the list is still checked,
    /// the rules that need them are not.
    func dataPoints(_ top: MappingReader, kind: Profile.Doorbell.Kind?, power: Profile.Power?) -> Profile.DataPoints? {
        guard let node = top["dps"] else { return Profile.DataPoints.defaults(for: kind ?? .screenIPC) }
        let listed = Profile.DataPoints.allKnownIds.map { "\($0) \(Profile.DataPoints.known[$0] ?? "")" }
            .joined(separator: ", ")
        let ids = diagnostics.uniqueList(
            node, at: "dps", expected: "a list of DP ids (PROTOCOL.md 8.3)", allowEmpty: true,
            item: { itemNode, path -> DPId? in
                guard itemNode.tagName == .int, let id = itemNode.int else {
                    diagnostics.add(.wrongType, at: itemNode.mark, field: path,
                                    "expected a DP id (an integer: \(listed)), got \(describe(itemNode))")
                    return nil
                }
                guard Profile.DataPoints.known[id] != nil else {
                    diagnostics.add(.invalidValue, at: itemNode.mark, field: path,
                                    "unknown DP id \(id): expected one of \(listed)")
                    return nil
                }
                return id
            },
            describeItem: { "\($0)" })
        guard let ids else { return nil }
        let result = Profile.DataPoints(ids: ids)
        // 8.4: a sleeping device reports DP 149 false, and true again on waking.
        if let power, power.lowPower, !result.has(149) {
            diagnostics.add(.inconsistent, at: node.mark, field: "dps",
                            "a low-power device reports DP 149 (wireless_awake) when it sleeps and wakes: list 149, or set power.lowPower: false")
            return nil
        }
        return result
    }
}
