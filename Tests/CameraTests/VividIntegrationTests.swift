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
        let (check, ipcemu) = try VividGuest.products()
        guard let run = try await VividGuest.run("""
            \(check) capture /dev/video0 30 640x360 30
            \(check) capture vivid 30 320x180 30 NV12
            \(check) unplug /dev/video0
            \(ipcemu) cameras
            \(ipcemu) snapshot /mnt/vivid.jpg --camera v4l2:/dev/video0 --size 640x360 --skip 2

            """, name: "vivid.sh", timeoutSeconds: 400) else { return }
        let lines = run.lines
        let results = lines.filter { $0.hasPrefix("CAMERA-CHECK:") }
        let guest = run.guest
        print("vivid test: \(String(format: "%.1f", run.seconds)) s; \(results.joined(separator: " | "))")
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
        // Which of the driver's first frames the snapshot takes depends on the guest's timing (#2 or #3 seen).
        #expect(lines.contains { $0.hasPrefix("/mnt/vivid.jpg: JPEG 640x360 from v4l2 /dev/video0 (frame #") && $0.hasSuffix(", YUYV)") },
                "\(run.output.suffix(3000))")
        #expect(guest.contains("IPCEMU-VIVID: script-exit 0"))
    }
}
