import ControlAPI
import DeviceProfile
import Foundation
import IPCWire
import Testing
import TestSupport

extension ControlAPI {
    /// PROTOCOL.md 8 in the web console, in headless Chromium (scripts/console-doorbell-check.py).
    @Suite("Doorbell console") struct DoorbellConsole {
        @Test("headless Chromium: a battery doorbell shows asleep, Wake wakes it, Motion and Press show their snapshots from the media route, a DP set in the form shows in the table",
              .enabled(if: onPath("chromium") != nil && onPath("python3") != nil))
        func doorbellPanel() async throws {
            var p = try DeviceProfile.load(path: packageRootPath + "/device-profiles/battery-doorbell.yaml")
            p.power.sleepAfter = 1
            p.power.wakeLatency = 0.3
            p.doorbell.ringTimeout = 10
            try await withControl(edit: { $0 = p }) { f in
                let script = packageRootPath + "/scripts/console-doorbell-check.py"
                var args = [script, f.server.url + "/", "--asleep"]
                if let shot = ProcessInfo.processInfo.environment["IPCEMU_CONSOLE_DOORBELL_SCREENSHOT"] { args += ["--screenshot", shot] }
                let run = try await runProgram(try #require(onPath("python3")), args)
                #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
                let seen = try JSONValue.parse(Array(run.stdout.utf8))
                #expect(seen["kind"]?.string == "doorbell")
                #expect(seen["asleep"]?.bool == true && seen["wokeByButton"]?.bool == true)
                let press = try #require(seen["pressSnapshot"]?.string)
                #expect(press.hasPrefix(f.base + "/media/press-"))
                #expect(seen["motionSnapshot"]?.string?.hasPrefix(f.base + "/media/motion-") == true)
                #expect(seen["snapshotSize"]?.array?.first?.int ?? 0 > 0)
                #expect(seen["dp134"]?.string == "false")
                #expect(await f.device.dataPointValues.contains(DPEntry(id: 134, value: .bool(false))))
                #expect(await f.device.doorbellCounters.wakes >= 1)
            }
        }
    }
}
