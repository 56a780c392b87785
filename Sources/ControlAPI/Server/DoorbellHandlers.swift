import CallEngine
import ControlAPISpec
import Emulator
import Foundation
import IPCWire
import OpenAPIRuntime

/// The doorbell parts of PROTOCOL.md 8 on the control API: the device's data points (8.3, read
/// and set as the device's own changes), a motion event (8.5), a wake and the battery (8.4), and
/// the push faults (8.8).
extension ControlHandlers {
    func getDataPoints(_ input: Operations.GetDataPoints.Input) async throws -> Operations.GetDataPoints.Output {
        let entry = try await entry(input.path.devId)
        return .ok(.init(body: .json(await APIViews.dataPointList(of: entry.device))))
    }

    /// PROTOCOL.md 8.3: the device's own changes (any access), reported as one protocol 4 message.
    /// The schema types every settable DP (a wrong type or range is the decoder's 400 naming
    /// `dps.<id>`); a DP the device lacks is 404 naming it, and nothing changes. DP 145 goes through
    /// the battery (8.4: the low-battery alert), DP 149 true through a wake; 149 false is 409.
    func setDataPoints(_ input: Operations.SetDataPoints.Input) async throws -> Operations.SetDataPoints.Output {
        let entry = try await entry(input.path.devId)
        guard case .json(let body) = input.body else {
            throw ControlError.badRequest("dps is required: an object of DP id -> value", field: "dps")
        }
        let d = body.dps
        var values: [DPId: DPValue] = [:]
        if let v = d._134 { values[134] = .bool(v) }
        if let v = d._136 { values[136] = .string(v) }
        if let v = d._146 { values[146] = .string(v.rawValue) }
        if let v = d._147 { values[147] = .int(Int64(v)) }
        if let v = d._150 { values[150] = .bool(v) }
        if let v = d._151 { values[151] = .string(v.rawValue) }
        guard !values.isEmpty || d._145 != nil || d._149 != nil else {
            throw ControlError.badRequest("dps must name at least one DP", field: "dps")
        }
        let device = entry.device
        let has = Set(await device.dataPointValues.map(\.id))
        var named = Array(values.keys)
        if d._145 != nil { named.append(DataPointCatalogue.battery) }
        if d._149 != nil { named.append(DataPointCatalogue.awake) }
        for id in named.sorted() where !has.contains(id) {
            throw ControlError(status: 404, "device '\(entry.devId)' has no DP \(id)", field: "dps.\(id)")
        }
        if d._149 == false {
            throw ControlError(status: 409, "DP 149 false: the device falls asleep by itself after power.sleepAfter idle seconds",
                               field: "dps.149")
        }
        if let percent = d._145, !(0...100).contains(percent) {
            throw ControlError.badRequest("DP 145 must be an integer 0 to 100", field: "dps.145")
        }
        if !values.isEmpty {
            do {
                try await device.setDataPoints(values)
            } catch {
                throw ControlError.badRequest(error.description, field: "dps.\(Self.dpId(of: error))")
            }
        }
        if let percent = d._145 { await device.setBattery(percent: percent) }
        if d._149 == true { await device.wake() }
        return .ok(.init(body: .json(await APIViews.dataPointList(of: device))))
    }

    /// PROTOCOL.md 8.5: a motion event: a snapshot, DP 115 and DP 212 `ipc_motion`.
    func motion(_ input: Operations.Motion.Input) async throws -> Operations.Motion.Output {
        let entry = try await entry(input.path.devId)
        let snapshot = await entry.device.motion()
        return .ok(.init(body: .json(.init(path: snapshot?.path, name: snapshot?.name))))
    }

    /// PROTOCOL.md 8.4: a wake as the wake topic would bring.
    func wake(_ input: Operations.Wake.Input) async throws -> Operations.Wake.Output {
        let entry = try await entry(input.path.devId)
        await entry.device.wake()
        return .accepted(.init(body: .json(await APIViews.power(of: entry.device))))
    }

    /// PROTOCOL.md 8.4: DP 145 set from outside (the battery drains or is charged).
    func setBattery(_ input: Operations.SetBattery.Input) async throws -> Operations.SetBattery.Output {
        let entry = try await entry(input.path.devId)
        guard case .json(let body) = input.body, (0...100).contains(body.percent) else {
            throw ControlError.badRequest("percent must be an integer 0 to 100", field: "percent")
        }
        await entry.device.setBattery(percent: body.percent)
        return .ok(.init(body: .json(await APIViews.power(of: entry.device))))
    }

    func getPushFaults(_ input: Operations.GetPushFaults.Input) async throws -> Operations.GetPushFaults.Output {
        let entry = try await entry(input.path.devId)
        guard let faults = await entry.device.pushFaults() else { throw Self.noPushes(entry.devId) }
        return .ok(.init(body: .json(APIViews.pushFaults(faults))))
    }

    /// PROTOCOL.md 8.8: push delay (seconds) and push loss (share); fields left out stay.
    func setPushFaults(_ input: Operations.SetPushFaults.Input) async throws -> Operations.SetPushFaults.Output {
        let entry = try await entry(input.path.devId)
        guard var faults = await entry.device.pushFaults() else { throw Self.noPushes(entry.devId) }
        if case .json(let body) = input.body {
            if let delay = body.delaySeconds { faults.delaySeconds = delay }
            if let loss = body.lossShare { faults.lossShare = loss }
        }
        do {
            try await entry.device.setPushFaults(faults)
        } catch {
            throw ControlError.badRequest(error.description, field: error.field)
        }
        return .ok(.init(body: .json(APIViews.pushFaults(faults))))
    }

    static func noPushes(_ devId: String) -> ControlError {
        ControlError(status: 409, "device '\(devId)' sends no pushes (its profile has no push.url or push.apnsDir)")
    }

    static func dpId(of error: DataPointStoreError) -> DPId {
        switch error {
        case .notInCatalogue(let id), .notOnDevice(let id), .invalidValue(let id, _, _): id
        }
    }
}

extension APIViews {
    /// `awake`, `asleep` or `waking` (PROTOCOL.md 8.4).
    static func powerName(_ state: PowerState) -> String {
        switch state {
        case .awake: "awake"
        case .asleep: "asleep"
        case .waking: "waking"
        }
    }

    static func power(of device: Device) async -> S.PowerReply {
        S.PowerReply(devId: device.devId, power: .init(rawValue: powerName(await device.powerState)) ?? .awake,
                     battery: await device.batteryPercent, lowPower: device.profile.power.lowPower)
    }

    static func pushFaults(_ f: PushFaults) -> S.PushFaults {
        S.PushFaults(delaySeconds: f.delaySeconds, lossShare: f.lossShare)
    }

    static func jsonValue(_ v: DPValue) -> OpenAPIValueContainer {
        switch v {
        case .bool(let b): OpenAPIValueContainer(booleanLiteral: b)
        case .int(let i): OpenAPIValueContainer(integerLiteral: Int(clamping: i))
        case .string(let s): OpenAPIValueContainer(stringLiteral: s)
        }
    }

    static func dataPointList(of device: Device) async -> S.DataPointList {
        let dps = await device.dataPointValues.map { entry in
            let d = DataPointCatalogue.definition(entry.id)
            return S.DataPoint(id: entry.id, code: d?.code ?? "", _type: d.map { "\($0.type)" } ?? "",
                               access: d?.access == .readWrite ? .rw : .ro, value: jsonValue(entry.value))
        }
        return S.DataPointList(devId: device.devId, dps: dps)
    }

    /// The doorbell fields of a device's state (PROTOCOL.md 8): kind, power, battery, DPs, counters.
    static func addingDoorbell(of device: Device, to state: S.DeviceState) async -> S.DeviceState {
        var state = state
        let profile = device.profile
        state.kind = .init(rawValue: profile.doorbell.kind.rawValue)
        state.power = .init(rawValue: powerName(await device.powerState))
        state.lowPower = profile.power.lowPower
        if profile.power.source == .battery { state.battery = await device.batteryPercent }
        let entries = await device.dataPointValues
        if !entries.isEmpty {
            var fields: [String: OpenAPIValueContainer] = [:]
            for e in entries { fields[String(e.id)] = jsonValue(e.value) }
            state.dps = .init(additionalProperties: fields)
        }
        let c = await device.doorbellCounters
        state.doorbellCounters = .init(presses: c.presses, pressesIgnored: c.pressesIgnored, wakes: c.wakes,
                                       badWakes: c.badWakes, droppedWhileAsleep: c.droppedWhileAsleep,
                                       dpRefusals: c.dpRefusals, dpReports: c.dpReports, messages: c.messages,
                                       pushFailures: c.pushFailures, streamControlRefusals: c.streamControlRefusals)
        return state
    }
}
