import Emulator
import Foundation
import Testing

/// The lines a fleet process prints with --json and its supervisor reads back (FleetLines.swift):
/// each event round-trips, and a line that is not one is an error naming the field, never a 0.
@Suite("fleet lines")
struct FleetLineTests {
    static let online = FleetOnlineLine(
        online: 130, started: 131, planned: 132, seconds: 2.313, rssBytes: 141_754_368, rssBytesBeforeDevices: 9_000_000,
        rssBytesPerDevice: 14_175, pssBytes: 120_000_000, processes: 3, broker: "mqtt://127.0.0.1:1883")

    static let lines: [FleetLine] = [
        .note(FleetNoteLine(message: "private broker at mqtt://127.0.0.1:1883 \"quoted\"\n")),
        .progress(FleetProgressLine(online: 5, started: 7, total: 10, seconds: 0.5)),
        .online(online),
        .online({
            var o = online
            o.power = FleetPowerCounts(lowPower: 10, awake: 2, asleep: 7, waking: 1)
            o.error = "out of descriptors: 300 devices need 612, the limit of 400"
            o.failures = ["fd-0001: bad devId"]
            return o
        }()),
        .power(FleetPowerCounts(lowPower: 10_000, awake: 0, asleep: 10_000, waking: 0)),
        .stopped(FleetStoppedLine(devices: 130, seconds: 0.042)),
    ]

    @Test("Every event round-trips through its JSON line, one line with its event named", arguments: lines)
    func roundTrip(_ line: FleetLine) throws {
        let text = line.jsonText
        #expect(!text.contains("\n"), "\(text)")
        #expect(text.contains(#""event":"\#(line.event.rawValue)""#), "\(text)")
        #expect(try FleetLine(jsonLine: Array(text.utf8)) == line)
    }

    @Test("The online line keeps the field names docs/fleet.md gives, the power counts flat beside them")
    func onlineFieldNames() throws {
        var o = Self.online
        o.power = FleetPowerCounts(lowPower: 4, awake: 1, asleep: 2, waking: 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(FleetLine.online(o).jsonText.utf8)) as? [String: Any])
        #expect(Set(object.keys) == [
            "event", "online", "started", "planned", "seconds", "rssBytes", "rssBytesBeforeDevices", "rssBytesPerDevice",
            "pssBytes", "processes", "broker", "lowPower", "awake", "asleep", "waking",
        ])
        #expect(object["broker"] as? String == "mqtt://127.0.0.1:1883", "no escaped slashes")
        // Without low-power devices, errors or failures, those fields are absent (not 0 or null).
        let plain = FleetLine.online(Self.online).jsonText
        for absent in ["lowPower", "error", "failures", "null"] { #expect(!plain.contains(absent), "\(plain)") }
    }

    @Test("A line that is not a fleet line is an error naming the field", arguments: [
        // A field renamed on one side (online -> onLine): missing, not 0.
        (#"{"event":"progress","onLine":5,"started":7,"total":10,"seconds":0.5}"#, "field 'online' is missing"),
        (#"{"event":"online","online":"130","started":1,"planned":1,"seconds":1,"rssBytes":1,"rssBytesBeforeDevices":0,"rssBytesPerDevice":1,"pssBytes":1,"processes":1,"broker":"b"}"#,
         "field 'online' is not an integer"),
        (#"{"event":"online","online":1,"started":1,"planned":1,"seconds":1,"rssBytesBeforeDevices":0,"rssBytesPerDevice":1,"pssBytes":1,"processes":1,"broker":"b"}"#,
         "field 'rssBytes' is missing"),
        // Power counts come all four or none.
        (#"{"event":"online","online":1,"started":1,"planned":1,"seconds":1,"rssBytes":1,"rssBytesBeforeDevices":0,"rssBytesPerDevice":1,"pssBytes":1,"processes":1,"broker":"b","lowPower":3,"asleep":3,"waking":0}"#,
         "field 'awake' is missing"),
        (#"{"event":"power","lowPower":3,"awake":null,"asleep":3,"waking":0}"#, "field 'awake' is null"),
        (#"{"event":"stopped","devices":3,"seconds":"fast"}"#, "field 'seconds' is not a number"),
        (#"{"event":"note"}"#, "field 'message' is missing"),
        (#"{"event":"exploded","online":1}"#, "field 'event' is none of note, progress, online, power, stopped"),
        (#"{"online":1}"#, "field 'event' is missing"),
        ("fleet: 130 of 130 devices online", "not JSON"),
    ])
    func refusedNamingTheField(_ text: String, _ expected: String) {
        #expect(throws: FleetLineError.self) { try FleetLine(jsonLine: Array(text.utf8)) }
        do {
            _ = try FleetLine(jsonLine: Array(text.utf8))
        } catch {
            #expect(error.description.hasPrefix(expected), "\(error.description)")
        }
    }
}
