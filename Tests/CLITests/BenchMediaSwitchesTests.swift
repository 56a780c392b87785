import Foundation
import Testing
import TestSupport

/// `bench media`'s A/B switches are hidden options (not in `--help`, listed by `--help-hidden`),
/// not environment variables.
@Suite("bench media switches", .timeLimit(.minutes(3)))
struct BenchMediaSwitchesTests {
    static let switches = ["--app-regular-nomination", "--app-jitterbuffer-race", "--app-link-after-call"]

    @Test("--help leaves the switches out, --help-hidden lists them")
    func hiddenButListed() async throws {
        let help = try await CLIRun.ipcemu(["bench", "media", "--help"])
        #expect(help.status == 0, "\(help.stderr)")
        #expect(help.stdout.contains("--calls"), "\(help.stdout)")
        for name in Self.switches { #expect(!help.stdout.contains(name), "\(name) in --help") }
        let hidden = try await CLIRun.ipcemu(["bench", "media", "--help-hidden"])
        #expect(hidden.status == 0, "\(hidden.stderr)")
        for name in Self.switches { #expect(hidden.stdout.contains(name), "\(name) not in --help-hidden: \(hidden.stdout)") }
    }

    @Test("a switch takes no value: one given is refused before the bench starts")
    func switchesTakeNoValue() async throws {
        let run = try await CLIRun.ipcemu(["bench", "media", "--app-regular-nomination=1"])
        #expect(run.status == 64, "status \(run.status): \(run.stderr)")
    }
}
