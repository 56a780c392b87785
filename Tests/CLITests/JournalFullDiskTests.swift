import AppSimulator
import CallEngine
import Foundation
import IPCWire
import Testing
import TestSupport

/// Issue 10 part 3: the call journal on a disk that fills up (a 64 KiB tmpfs) and then has room again.
@Suite("Faults: journal on a full disk (issue 10)", .timeLimit(.minutes(8)), .heavy)
struct JournalFullDiskTests {
    static let canMount = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/bin/mount")

    /// One call from answer to hang-up; waits until the app saw it end.
    private func call(_ alice: AppWatch) async throws -> String {
        let sid = try await alice.answeredCall()
        try await alice.app.hangUp()
        #expect(await alice.first { e -> Bool? in if case .callEnded(let r) = e, r.sessionId == sid { true } else { nil } } == true)
        return sid
    }

    @Test("failed writes are counted in /metrics; after space returns the journal goes on and every line parses",
          .enabled(if: canMount, "mounting a tmpfs needs root"))
    func fullDisk() async throws {
        let rig = try await FaultRig()
        let dir = rig.journalDirectory
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let mounted = FaultRig.shell("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir])
        try #require(mounted.status == 0, "mount: \(mounted.output)")
        defer { FaultRig.shell("/bin/umount", ["-l", dir]) }

        let run = try await rig.device(["--control", "127.0.0.1:0"])
        let control = try #require(await FaultRig.controlURL(run), "\(run.stdout)")
        let series = #"ipcemu_journal_write_failures_total{device="\#(FaultRig.devId)"}"#
        #expect(FaultRig.sample(try await FaultRig.get(control + "/metrics"), series) == 0)
        let alice = try await rig.app()
        let first = try await call(alice)
        #expect(await eventually { ((try? rig.journalEnds(first)) ?? []).count == 1 })

        // Fill the disk to the last byte.
        let filler = dir + "/filler"
        #expect(FileManager.default.createFile(atPath: filler, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: filler))
        let chunk = Data(repeating: 0x2E, count: 1024)
        while (try? handle.write(contentsOf: chunk)) != nil {}
        for size in [256, 64, 16, 1] {
            while (try? handle.write(contentsOf: Data(repeating: 0x2E, count: size))) != nil {}
        }
        try? handle.close()

        // Calls while the disk is full: the device carries on; its journal lines fail and are counted.
        // (The first may still fit in the journal's last page.)
        var failures = 0
        var whileFull: [String] = []
        while failures == 0, whileFull.count < 6 {
            whileFull.append(try await call(alice))
            let deadline = ContinuousClock.now + .seconds(1)
            while failures == 0, ContinuousClock.now < deadline {
                failures = FaultRig.sample((try? await FaultRig.get(control + "/metrics")) ?? "", series) ?? 0
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        #expect(failures > 0, "no failed write counted after \(whileFull.count) calls")
        #expect(run.process.isRunning)

        // Space returns: the next call's lines are all there, and every line of the file parses.
        try FileManager.default.removeItem(atPath: filler)
        let after = try await call(alice)
        #expect(await eventually { ((try? rig.journalEnds(after)) ?? []).count == 1 })
        let lines = try rig.journalLines()   // records an issue for any line that does not parse
        #expect(lines.filter { $0["session"] == .string(after) }.count >= 4, "\(lines.suffix(6))")
        for sid in whileFull { #expect(try rig.journalEnds(sid).count <= 1) }
        let metrics = try await FaultRig.get(control + "/metrics")
        #expect(FaultRig.sample(metrics, series) ?? 0 >= failures)
        await alice.stop()
        run.signal(SIGTERM)
        #expect(await run.waitForExit(timeout: .seconds(5)) == 0)
    }
}
