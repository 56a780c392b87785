import Foundation
import MQTTTransport
import Testing
import TestSupport

/// Issue 22: `ipcemu app call --video` prepares its link while the call rings, as processes: an
/// `ipcemu run` device and the app command, each on its own (as a user runs them).
@Suite("ipcemu app call --video (prepared link)", .serialized, .timeLimit(.minutes(8)), .heavy)
struct AppCallVideoTests {
    let doorbell = packageRootPath + "/device-profiles/doorbell.yaml"
    let devId = "ipcemu-doorbell-0001"

    @Test("the device rings 3 s: the app's link is ready before the answer, and the video is decoded")
    func preparedBeforeTheAnswer() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let run = try IPCEmuProcess(["run", "--profile", doorbell, "--broker", broker.url, "--answer", "answer:3"])
        #expect(await run.waitFor("is online"), "stdout: \(run.stdout)\nstderr: \(run.stderr)")
        let call = try await CLIRun.ipcemu(["app", "call", devId, "--broker", broker.url, "--profile", doorbell,
                                            "--video", "--hangup-after", "3"])
        #expect(call.status == 0, "\(call.stdout)\n\(call.stderr)")
        let lines = call.stdout.split(separator: "\n").map(String.init)
        // The line the app prints at the answer, and where it comes: right after `<- answer`.
        let answer = try #require(lines.firstIndex { $0.contains("<- answer from=\(devId)") }, "\(call.stdout)")
        let ready = try #require(lines.firstIndex { $0.contains("video: link prepared while ringing (offer ready") },
                                 "\(call.stdout)")
        #expect(ready == answer + 1, "\(call.stdout)")
        let summary = try #require(lines.first { $0.hasPrefix("video summary:") }, "\(call.stdout)")
        #expect(summary.contains("answer -> first frame"), "\(summary)")
        #expect(!summary.hasPrefix("video summary: 0 frames"), "\(summary)")
        run.signal(SIGTERM)
        #expect(await run.waitForExit(timeout: .seconds(10)) == 0)
    }

    @Test("rejected after ringing: exit 3, and the link prepared while it rang is closed")
    func rejectedCallClosesThePreparedLink() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let run = try IPCEmuProcess(["run", "--profile", doorbell, "--broker", broker.url, "--answer", "reject:1"])
        #expect(await run.waitFor("is online"), "stdout: \(run.stdout)\nstderr: \(run.stderr)")
        let call = try await CLIRun.ipcemu(["app", "call", devId, "--broker", broker.url, "--profile", doorbell, "--video"])
        #expect(call.status == 3, "\(call.stdout)\n\(call.stderr)")
        #expect(call.stdout.contains("<- reject from=\(devId)"), "\(call.stdout)")
        #expect(call.stdout.contains("video: the link prepared while ringing is closed (call rejected)"), "\(call.stdout)")
        #expect(!call.stdout.contains("video summary"), "\(call.stdout)")
        run.signal(SIGTERM)
        #expect(await run.waitForExit(timeout: .seconds(10)) == 0)
    }
}
