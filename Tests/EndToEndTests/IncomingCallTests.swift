import AppSimulator
import CallEngine
import Emulator
import IPCWire
import Testing

@Suite("Incoming call over a real broker (PROTOCOL.md 3.1)", .serialized)
struct IncomingCallTests {
    @Test func answeredThenHungUp() async throws {
        let h = try await CallHarness { $0.behaviour.answerPolicy = .answer(afterSeconds: 0.1) }
        let app = try await h.app("user-alice")
        let appEvents = EventRecorder(await app.events())
        let sessionId = try await app.startCall(devId: h.profile.identity.devId, timeoutSeconds: 10)
        #expect(await appEvents.first { $0.receivedEvent(.ring) } != nil)
        let answer = await appEvents.first { $0.receivedEvent(.answer) }
        #expect(answer?.sessionId == sessionId)
        #expect(await app.phase == .answered)
        try await app.hangUp()
        let deviceEnded = await h.device.status
        _ = deviceEnded
        let record = await appEvents.first { $0.endedRecord }
        #expect(record?.sdkError == nil)
        await h.close()
    }
}
