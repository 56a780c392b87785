import Foundation
import TestSupport
import Testing

/// The stand-in checked on its own, against a device written from the SDK's facts in Python
/// (scripts/tuya_standin/selfcheck.py): every refusal, ACLs, CONNACK 5 after unbind, the TURN relay.
@Suite("Tuya stand-in selfcheck", .timeLimit(.minutes(3)))
struct StandinSelfCheckTests {
    @Test("selfcheck: iotdns, token push, activation refusals, ACLs, unbind -> CONNACK 5, info.sync, coturn relay")
    func selfcheck() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-m", "tuya_standin.selfcheck"]
        process.currentDirectoryURL = URL(fileURLWithPath: packageRootPath + "/scripts")
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out   // a traceback, if any, lands in the report
        try process.run()
        let text = await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
            DispatchQueue.global().async {
                let data = out.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(returning: String(decoding: data, as: UTF8.self))
            }
        }
        #expect(process.terminationStatus == 0, "selfcheck:\n\(text)")
        #expect(text.contains("passed: 0 failure(s)"))
        #expect(!text.contains("FAIL "), "selfcheck:\n\(text)")
        #expect(text.components(separatedBy: "\nok   ").count - 1 >= 20, "selfcheck:\n\(text)")
    }
}
