import Foundation
import IPCWire
import Testing
@testable import CallEngine

/// The typed DP store of PROTOCOL.md 8.3, rule by rule.
@Suite("Data point store (PROTOCOL.md 8.3)")
struct DataPointStoreTests {
    static let doorbellIds = DataPointCatalogue.ids

    func store(_ ids: [DPId] = doorbellIds, start: [DPId: DPValue] = [:]) throws -> DataPointStore {
        try DataPointStore(ids: ids, startValues: start)
    }

    func set(_ members: [(String, JSONValue)]) -> [(key: String, value: JSONValue)] {
        members.map { (key: $0.0, value: $0.1) }
    }

    @Test("the catalogue is 8.3's table: ids, codes, types, access, each default fits its type")
    func catalogue() {
        let table: [(DPId, String, DPAccess)] = [
            (115, "movement_detect_pic", .readOnly), (134, "motion_switch", .readWrite),
            (136, "doorbell_active", .readOnly), (145, "wireless_electricity", .readOnly),
            (146, "wireless_powermode", .readOnly), (147, "wireless_lowpower", .readWrite),
            (149, "wireless_awake", .readWrite), (150, "record_switch", .readWrite),
            (151, "record_mode", .readWrite), (154, "doorbell_pic", .readOnly),
            (185, "alarm_message", .readOnly), (212, "initiative_message", .readOnly),
        ]
        #expect(DataPointCatalogue.all.map(\.id) == table.map(\.0))
        #expect(DataPointCatalogue.all.map(\.code) == table.map(\.1))
        #expect(DataPointCatalogue.all.map(\.access) == table.map(\.2))
        for d in DataPointCatalogue.all {
            #expect(d.type.problem(with: d.defaultValue) == nil, "\(d.name)")
        }
        #expect(DataPointCatalogue.definition(145)?.type == .int(0...100))
        #expect(DataPointCatalogue.definition(146)?.type == .enumeration(["0", "1"]))
        #expect(DataPointCatalogue.definition(151)?.type == .enumeration(["1", "2"]))
        #expect(DataPointCatalogue.definition(149)?.type == .bool)
        #expect(DataPointCatalogue.definition(154)?.type == .raw)
    }

    @Test("built from the profile's list: only those DPs, start values typed, bad ones refused")
    func building() throws {
        let s = try store([149, 145, 149], start: [145: .int(80)])
        #expect(s.ids == [145, 149])
        #expect(s.all == [DPEntry(id: 145, value: .int(80)), DPEntry(id: 149, value: .bool(true))])
        #expect(throws: DataPointStoreError.notInCatalogue(999)) { try DataPointStore(ids: [999]) }
        #expect(throws: DataPointStoreError.notOnDevice(146)) { try DataPointStore(ids: [145], startValues: [146: .string("0")]) }
        #expect(throws: DataPointStoreError.invalidValue(id: 145, code: "wireless_electricity", .outOfRange(101, 0...100))) {
            try DataPointStore(ids: [145], startValues: [145: .int(101)])
        }
        #expect(throws: DataPointStoreError.invalidValue(id: 145, code: "wireless_electricity",
                                                         .wrongType(expected: "integer", got: "string"))) {
            try DataPointStore(ids: [145], startValues: [145: .string("80")])
        }
        #expect(try DataPointStore(ids: []).all.isEmpty)
    }

    @Test("8.3: a writable DP of the right type in range is applied and reported, changed or not")
    func appliedAndEchoed() throws {
        var s = try store()
        let out = s.applySet(set([("134", .bool(false)), ("150", .bool(true)), ("147", .int(35))]), from: "u1")
        #expect(out.uid == "u1")
        #expect(out.applied == [134, 150, 147])
        #expect(out.changed == [134, 147])
        #expect(out.refusals.isEmpty)
        #expect(out.unknownKeys.isEmpty)
        #expect(!out.wakeRequested)
        // "reports every DP the message set, changed or not", ordered by id.
        #expect(out.report == [DPEntry(id: 134, value: .bool(false)), DPEntry(id: 147, value: .int(35)),
                               DPEntry(id: 150, value: .bool(true))])
        #expect(s.value(134) == .bool(false))
        #expect(s.value(147) == .int(35))
        // Enum members travel as strings.
        let mode = s.applySet(set([("151", .string("2"))]), from: "u1")
        #expect(mode.report == [DPEntry(id: 151, value: .string("2"))])
        #expect(s.value(151) == .string("2"))
    }

    @Test("8.3: read-only, wrong type, out of range: not applied, current value reported back, reason names the DP")
    func refusedReportedBack() throws {
        var s = try store()
        let before = s
        let out = s.applySet(set([
            ("136", .string("1732200000")),   // read-only (the Tuya SDK answers a write of 136 with its value)
            ("134", .int(1)),                  // wrong type
            ("147", .int(101)),                // out of range
            ("151", .string("3")),             // not a member
            ("150", .null),                    // not a DP value at all
            ("145", .double(50.5)),            // read-only and a fraction: the kind is judged first
        ]), from: "u1")
        #expect(s == before)
        #expect(out.applied.isEmpty)
        #expect(out.changed.isEmpty)
        #expect(out.report == [
            DPEntry(id: 134, value: .bool(true)), DPEntry(id: 136, value: .string("0")),
            DPEntry(id: 145, value: .int(100)), DPEntry(id: 147, value: .int(20)),
            DPEntry(id: 150, value: .bool(true)), DPEntry(id: 151, value: .string("1")),
        ])
        #expect(out.refusals == [
            DPRefusal(id: 136, code: "doorbell_active", reason: .readOnly),
            DPRefusal(id: 134, code: "motion_switch", reason: .invalid(.wrongType(expected: "bool", got: "integer"))),
            DPRefusal(id: 147, code: "wireless_lowpower", reason: .invalid(.outOfRange(101, 0...100))),
            DPRefusal(id: 151, code: "record_mode", reason: .invalid(.notAMember("3", ["1", "2"]))),
            DPRefusal(id: 150, code: "record_switch", reason: .invalid(.wrongType(expected: "bool", got: "null"))),
            DPRefusal(id: 145, code: "wireless_electricity",
                      reason: .invalid(.wrongType(expected: "integer", got: "number with a fraction"))),
        ])
        #expect(out.refusals[0].description == "DP 136 doorbell_active is read-only")
        #expect(out.refusals[2].description == "DP 147 wireless_lowpower refused: expected 0 to 100, got 101")
    }

    @Test("8.3: an id the device lacks, or a key that is no DP id: not applied, not reported, counted")
    func unknownIds() throws {
        var s = try store([145, 149])
        let out = s.applySet(set([("134", .bool(false)), ("abc", .bool(true)), ("999", .int(1)), ("", .int(1)),
                                  ("-149", .bool(true)), ("149", .bool(true))]), from: "u1")
        #expect(out.unknownKeys == ["134", "abc", "999", "", "-149"])
        #expect(out.report == [DPEntry(id: 149, value: .bool(true))])
        #expect(out.refusals.isEmpty)
        #expect(!s.has(134))
        // Nothing the device has named at all: nothing to report.
        let none = s.applySet(set([("134", .bool(false))]), from: "u1")
        #expect(none.report.isEmpty)
        #expect(none.unknownKeys == ["134"])
    }

    @Test("8.3: DP 149 from the app: true is a wake (applied, reported), false is refused")
    func awakeOnlyTrue() throws {
        var s = try store()
        try s.deviceSet(149, .bool(false))
        let no = s.applySet(set([("149", .bool(false))]), from: "u1")
        #expect(no.refusals == [DPRefusal(id: 149, code: "wireless_awake", reason: .awakeOnlyTrue)])
        #expect(no.report == [DPEntry(id: 149, value: .bool(false))])
        #expect(!no.wakeRequested)
        let yes = s.applySet(set([("149", .bool(true)), ("134", .bool(false))]), from: "u1")
        #expect(yes.wakeRequested)
        #expect(yes.refusals.isEmpty)
        #expect(yes.changed == [134, 149])
        #expect(yes.report == [DPEntry(id: 134, value: .bool(false)), DPEntry(id: 149, value: .bool(true))])
        // A wrong type for 149 is no wake.
        let wrong = s.applySet(set([("149", .string("true"))]), from: "u1")
        #expect(!wrong.wakeRequested)
        #expect(wrong.refusals.count == 1)
    }

    @Test("a key twice: each judged, the last applied value stands, reported once")
    func duplicateKeys() throws {
        var s = try store()
        let out = s.applySet(set([("147", .int(30)), ("147", .int(500)), ("0147", .int(40))]), from: "u1")
        #expect(out.applied == [147, 147])
        #expect(out.refusals.map(\.id) == [147])
        #expect(out.report == [DPEntry(id: 147, value: .int(40))])
    }

    @Test("raw DPs hold base64 JSON objects or nothing; the device's own writes are typed too")
    func deviceSetTyped() throws {
        var s = try store()
        #expect(try s.deviceSet(136, .string("1732200000")))
        #expect(try !s.deviceSet(136, .string("1732200000")))
        let pic = DPAlert.base64(.object(["v": .string("3.0"), "bucket": .string("local")]))
        #expect(try s.deviceSet(154, pic))
        #expect(throws: DataPointStoreError.invalidValue(id: 154, code: "doorbell_pic", .notBase64JSON)) {
            try s.deviceSet(154, .string("not base64!"))
        }
        let notObject = DPValue.string(Data("[1,2]".utf8).base64EncodedString())
        #expect(throws: DataPointStoreError.invalidValue(id: 185, code: "alarm_message", .notBase64JSON)) {
            try s.deviceSet(185, notObject)
        }
        #expect(throws: DataPointStoreError.invalidValue(id: 145, code: "wireless_electricity", .outOfRange(-1, 0...100))) {
            try s.deviceSet(145, .int(-1))
        }
        #expect(throws: DataPointStoreError.notInCatalogue(7)) { try s.deviceSet(7, .bool(true)) }
        var small = try store([149])
        #expect(throws: DataPointStoreError.notOnDevice(145)) { try small.deviceSet(145, .int(1)) }
        #expect(s.value(154) == pic)
        #expect(s.value(145) == .int(100))
        // An app may not write a raw DP either (all are read-only).
        let out = s.applySet(set([("154", .string(""))]), from: "u1")
        #expect(out.refusals == [DPRefusal(id: 154, code: "doorbell_pic", reason: .readOnly)])
        #expect(out.report == [DPEntry(id: 154, value: pic)])
    }

    @Test("protocol 31: the listed DPs the device has, by id, once; all when the list is empty")
    func query() throws {
        let s = try store([145, 147, 149])
        #expect(s.report(ids: [149, 145, 149, 134]) == [DPEntry(id: 145, value: .int(100)), DPEntry(id: 149, value: .bool(true))])
        #expect(s.report(ids: []) == s.all)
        #expect(s.all.map(\.id) == [145, 147, 149])
        #expect(s.entries([212]).isEmpty)
    }

    @Test("DP 212 alerts: base64 of key-sorted JSON that decodes back; low battery has no file")
    func alerts() throws {
        let v = DPAlert.lowBattery(t: 1_732_200_000)
        let json = try #require(DPAlert.decode(v))
        #expect(json == .object(["cmd": .string("ipc_low_battery"), "type": .string("none"), "files": .array([]),
                                 "t": .int(1_732_200_000)]))
        #expect(DataPointCatalogue.definition(212)?.type.problem(with: v) == nil)
        let msg = DPAlert.initiative(cmd: .leaveMessage, type: .video, files: ["/api/devices/d/media/m.mp4"], t: 5,
                                     extra: ["duration": .int(10)])
        guard case .string(let text) = msg, let data = Data(base64Encoded: text) else {
            Issue.record("not base64 text")
            return
        }
        #expect(String(decoding: data, as: UTF8.self)
                == #"{"cmd":"ipc_leave_msg","duration":10,"files":["/api/devices/d/media/m.mp4"],"t":5,"type":"video"}"#)
        #expect(DPAlert.decode(.string("")) == nil)
        #expect(DPAlert.decode(.int(1)) == nil)
    }
}
