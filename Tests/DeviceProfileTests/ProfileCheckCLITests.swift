import Foundation
import Testing
import TestSupport

@Suite("ipcemu profile check")
struct ProfileCheckCLITests {
    let doorbell = packageRoot.appendingPathComponent("device-profiles/doorbell.yaml").path

    func requireBinary() -> Bool {
        guard FileManager.default.isExecutableFile(atPath: ipcemuBinary) else {
            Issue.record("no ipcemu binary at \(ipcemuBinary): run `swift build --product ipcemu` first")
            return false
        }
        return true
    }

    func writeBadProfile() throws -> String {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("ipcemu-bad-\(UUID().uuidString).yaml").path
        let text = identityLines + """

            capabilities:
              video:
                main: {width: 1280, height: 720, fps: thirty}

            """
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("a good file: ok line with the devId and category, exit 0")
    func good() async throws {
        guard requireBinary() else { return }
        let run = try await CLIRun.ipcemu(["profile", "check", doorbell])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.hasPrefix("\(doorbell): ok (devId ipcemu-doorbell-0001, category sp_dpsxj, rtcCapability 7"))
        #expect(run.stderr.isEmpty)
    }

    @Test("a bad file among good ones: its error with file, line and field; exit 1")
    func bad() async throws {
        guard requireBinary() else { return }
        let badPath = try writeBadProfile()
        defer { try? FileManager.default.removeItem(atPath: badPath) }
        let run = try await CLIRun.ipcemu(["profile", "check", doorbell, badPath])
        #expect(run.status == 1)
        #expect(run.stdout.contains("\(doorbell): ok ("))
        #expect(!run.stdout.contains(badPath))
        #expect(run.stderr == "\(badPath):8: capabilities.video.main.fps: expected a positive integer, got 'thirty'\n")
    }

    @Test("a missing file is reported, not a crash; no file at all is a usage error")
    func missingAndNone() async throws {
        guard requireBinary() else { return }
        let run = try await CLIRun.ipcemu(["profile", "check", "/nonexistent/ipcemu/profile.yaml"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("/nonexistent/ipcemu/profile.yaml: no such file"))
        let none = try await CLIRun.ipcemu(["profile", "check"])
        #expect(none.status != 0)
        #expect(none.stderr.contains("give at least one profile file"))
    }
}
