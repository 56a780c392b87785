import Foundation
import Testing
import TestSupport

/// Our V4L2 source against a real kernel driver: Debian's kernel booted under qemu (software
/// emulation unless KVM is usable) with the vivid virtual camera, running ipcemu-camera-check from
/// the host over virtio-9p. scripts/vivid/prepare.sh downloads the kernel package on first use.
@Suite("vivid camera under qemu", .heavy)
struct VividIntegrationTests {
    @Test("captures 30 frames from vivid by path and by card name, survives an emulated unplug", .timeLimit(.minutes(10)))
    func captureFromVivid() async throws {
        let root = TestEnvironment.repositoryRoot
        let runner = root.appendingPathComponent("scripts/vivid/run.sh").path
        let check = TestEnvironment.product("ipcemu-camera-check")
        let ipcemu = TestEnvironment.product("ipcemu")
        try #require(FileManager.default.isExecutableFile(atPath: check), "ipcemu-camera-check not built at \(check)")
        let qemu = ["/usr/bin/qemu-system-x86_64", "/usr/local/bin/qemu-system-x86_64"]
        guard qemu.contains(where: FileManager.default.isExecutableFile(atPath:)) else {
            Issue.record("""
                VIVID TEST NOT RUN: qemu-system-x86_64 is missing. Install it with scripts/install-deps.sh \
                (Debian package qemu-system-x86); this test boots a kernel with the vivid camera under qemu.
                """)
            return
        }
        let script = TestEnvironment.temporaryPath("vivid.sh")
        // The guest reuses the host's GStreamer plugin registry (read-only share) instead of
        // rescanning every plugin under emulation: same HOME / XDG_CACHE_HOME, no update check.
        let environment = ProcessInfo.processInfo.environment
        var exports = "export HOME='\(NSHomeDirectory())' GST_REGISTRY_UPDATE=no\n"
        if let cache = environment["XDG_CACHE_HOME"] { exports += "export XDG_CACHE_HOME='\(cache)'\n" }
        if let registry = environment["GST_REGISTRY"] { exports += "export GST_REGISTRY='\(registry)'\n" }
        let guestScript = exports + """
            \(check) capture /dev/video0 30 640x360 30
            \(check) capture vivid 30 320x180 30 NV12
            \(check) unplug /dev/video0
            \(ipcemu) cameras
            \(ipcemu) snapshot /mnt/vivid.jpg --camera v4l2:/dev/video0 --size 640x360 --skip 2
            """
        #expect(FileManager.default.createFile(atPath: script, contents: Data(guestScript.utf8)))
        defer { try? FileManager.default.removeItem(atPath: script) }
        let started = Date()
        let run = try await TestEnvironment.run("/bin/bash", [runner, script, "400"])
        let seconds = Date().timeIntervalSince(started)
        let lines = run.output.split(whereSeparator: \.isNewline).map(String.init)
        let results = lines.filter { $0.hasPrefix("CAMERA-CHECK:") }
        let guest = lines.filter { $0.hasPrefix("IPCEMU-VIVID:") }
        print("vivid test: \(String(format: "%.1f", seconds)) s; \(results.joined(separator: " | "))")
        #expect(run.status == 0, "qemu run failed (status \(run.status)): \(run.output.suffix(3000))")
        try #require(results.count == 3, "expected three CAMERA-CHECK lines; guest said: \(guest) \(run.output.suffix(3000))")
        #expect(results[0].hasPrefix("CAMERA-CHECK: ok frames=30 format=YUYV size=640x360"), "\(results[0])")
        #expect(results[0].contains("status=\"live (/dev/video0 YUYV 640x360@30)\""), "\(results[0])")
        #expect(results[1].hasPrefix("CAMERA-CHECK: ok frames=30 format=NV12 size=320x180"), "\(results[1])")
        #expect(results[2].hasPrefix("CAMERA-CHECK: ok unplug"), "\(results[2])")
        #expect(results[2].contains("went away"), "\(results[2])")
        // `ipcemu cameras` and `ipcemu snapshot` against the real driver.
        #expect(lines.contains { $0.hasPrefix("/dev/video0: \"vivid\" (driver vivid") }, "\(run.output.suffix(3000))")
        #expect(lines.contains("  YUYV YUYV 4:2:2 -> YUYV"))
        #expect(lines.contains("    640x360 @ 1, 2, 4, 5, 10, 12.5, 15, 25, 30, 40 fps"))
        #expect(lines.contains("/mnt/vivid.jpg: JPEG 640x360 from v4l2 /dev/video0 (frame #2, YUYV)"), "\(run.output.suffix(3000))")
        #expect(guest.contains("IPCEMU-VIVID: script-exit 0"))
    }
}
