import Foundation
import Testing
import TestSupport

/// Runs a shell script inside the vivid guest (scripts/vivid/run.sh: Debian's kernel under qemu with
/// the vivid camera, chrooted into the host's root): what the vivid tests share.
enum VividGuest {
    struct Run {
        var status: Int32
        var output: String
        /// The console, one entry a line (a trailing CR removed).
        var lines: [String]
        var seconds: Double
        /// The guest's own lines (`IPCEMU-VIVID: ...`).
        var guest: [String] { lines.filter { $0.hasPrefix("IPCEMU-VIVID:") } }
    }

    /// The host's `ipcemu-camera-check` and `ipcemu`, after checking both are built.
    static func products() throws -> (check: String, ipcemu: String) {
        let check = TestEnvironment.product("ipcemu-camera-check")
        let ipcemu = TestEnvironment.product("ipcemu")
        try #require(FileManager.default.isExecutableFile(atPath: check), "ipcemu-camera-check not built at \(check)")
        try #require(FileManager.default.isExecutableFile(atPath: ipcemu), "ipcemu not built at \(ipcemu)")
        return (check, ipcemu)
    }

    /// Boots the guest and runs `body` in it; nil (and an issue saying so) when qemu is missing.
    /// The guest reuses the host's GStreamer plugin registry (read-only share) instead of
    /// rescanning every plugin under emulation: same HOME / XDG_CACHE_HOME, no update check.
    static func run(_ body: String, name: String, timeoutSeconds: Int) async throws -> Run? {
        let qemu = ["/usr/bin/qemu-system-x86_64", "/usr/local/bin/qemu-system-x86_64"]
        guard qemu.contains(where: FileManager.default.isExecutableFile(atPath:)) else {
            Issue.record("""
                VIVID TEST NOT RUN: qemu-system-x86_64 is missing. Install it with scripts/install-deps.sh \
                (Debian package qemu-system-x86); this test boots a kernel with the vivid camera under qemu.
                """)
            return nil
        }
        let runner = TestEnvironment.repositoryRoot.appendingPathComponent("scripts/vivid/run.sh").path
        let script = TestEnvironment.temporaryPath(name)
        let environment = ProcessInfo.processInfo.environment
        var exports = "export HOME='\(NSHomeDirectory())' GST_REGISTRY_UPDATE=no\n"
        if let cache = environment["XDG_CACHE_HOME"] { exports += "export XDG_CACHE_HOME='\(cache)'\n" }
        if let registry = environment["GST_REGISTRY"] { exports += "export GST_REGISTRY='\(registry)'\n" }
        #expect(FileManager.default.createFile(atPath: script, contents: Data((exports + body).utf8)))
        defer { try? FileManager.default.removeItem(atPath: script) }
        let started = Date()
        let run = try await TestEnvironment.run("/bin/bash", [runner, script, "\(timeoutSeconds)"])
        let lines = run.output.split(whereSeparator: \.isNewline).map { line in
            String(line.hasSuffix("\r") ? line.dropLast() : line)
        }
        return Run(status: run.status, output: run.output, lines: lines, seconds: Date().timeIntervalSince(started))
    }
}
