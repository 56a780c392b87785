import Emulator
import Foundation

/// What `ipcemu fleet` prints: human lines, or with --json one `FleetLine` per line (the lines a
/// supervisor reads from its workers, FleetLines.swift).
final class FleetOutput: Sendable {
    let json: Bool

    init(json: Bool) { self.json = json }

    func note(_ text: String) {
        if json {
            say(FleetLine.note(FleetNoteLine(message: text)).jsonText)
        } else {
            say("fleet: \(text)")
        }
    }

    func progress(_ p: FleetProgress) {
        if json {
            say(FleetLine.progress(FleetProgressLine(online: p.online, started: p.started, total: p.total,
                                                     seconds: Self.seconds(p.elapsed))).jsonText)
        } else {
            say("fleet: \(p.online)/\(p.total) online (\(format(p.elapsed)) s)")
        }
    }

    func online(_ r: FleetStartReport, rssBytes: Int, rssBeforeBytes: Int, pssBytes: Int, processes: Int, brokerURL: String,
                power: FleetPowerCounts? = nil) {
        let perDevice = r.started > 0 ? Double(rssBytes) / Double(r.started) : 0
        if json {
            let line = FleetOnlineLine(
                online: r.online, started: r.started, planned: r.planned, seconds: Self.seconds(r.elapsed),
                rssBytes: rssBytes, rssBytesBeforeDevices: rssBeforeBytes, rssBytesPerDevice: Int(perDevice),
                pssBytes: pssBytes, processes: processes, broker: brokerURL,
                power: power.flatMap { $0.lowPower > 0 ? $0 : nil }, error: r.shortage,
                failures: r.failures.isEmpty ? nil : r.failures)
            say(FleetLine.online(line).jsonText)
        } else {
            say(String(format: "fleet: %d of %d devices online in %@ s, %.1f KB RSS per device (%.1f MB in %d process%@, PSS %.1f MB) on %@",
                       r.online, r.planned, format(r.elapsed), perDevice / 1024, Double(rssBytes) / 1_048_576,
                       processes, processes == 1 ? "" : "es", Double(pssBytes) / 1_048_576, brokerURL))
            if let power, power.lowPower > 0 { self.power(power) }
            if let s = r.shortage { note("error: \(s)") }
            for f in r.failures { note("error: \(f)") }
        }
    }

    /// The low-power devices' states (PROTOCOL.md 8.4): after start-up, and whenever they change.
    func power(_ p: FleetPowerCounts) {
        if json {
            say(FleetLine.power(p).jsonText)
        } else {
            say("fleet: \(p.lowPower) low-power devices: \(p.awake) awake, \(p.asleep) asleep, \(p.waking) waking")
        }
    }

    /// Prints a `power` line every second in which the low-power devices' states changed (none
    /// for a fleet without low-power devices); `extra` adds other processes' counts (a supervisor's
    /// workers). Cancel the task to stop it.
    func watchPower(_ fleet: Fleet, extra: @escaping @Sendable () -> FleetPowerCounts = { FleetPowerCounts() }) -> Task<Void, Never> {
        Task {
            var last: FleetPowerCounts?
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                guard !Task.isCancelled else { break }
                var now = await fleet.powerCounts()
                let more = extra()
                now.lowPower += more.lowPower
                now.awake += more.awake
                now.asleep += more.asleep
                now.waking += more.waking
                if now.lowPower > 0, now != last { power(now) }
                last = now
            }
        }
    }

    func stopped(devices: Int, took: Duration) {
        if json {
            say(FleetLine.stopped(FleetStoppedLine(devices: devices, seconds: Self.seconds(took))).jsonText)
        } else {
            say("fleet: \(devices) devices offline in \(format(took)) s")
        }
    }

    /// Seconds to the millisecond, as the JSON lines give them.
    static func seconds(_ d: Duration) -> Double {
        let s = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        return (s * 1000).rounded() / 1000
    }

    func format(_ d: Duration) -> String {
        let s = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        return String(format: "%.3f", s)
    }

    func escape(_ s: String) -> String {
        var out = ""
        for c in s.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default:
                if c.value < 0x20 { out += String(format: "\\u%04x", c.value) } else { out.unicodeScalars.append(c) }
            }
        }
        return out
    }
}
