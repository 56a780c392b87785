import CallEngine
import CallRuntime
import DeviceProfile
import Emulator
import IPCEmuTesting
import IPCWire
import MQTTTransport
import Testing
import TestSupport

/// PROTOCOL.md 3.4 (issue 23): a `Device` answers refused messages at most 5 times a second per
/// sender and 50 times a second in all, on its injected clock; the rest are dropped and counted.
/// One budget covers the engines' `stop`s and the glue's own refusal replies (a refused offer's
/// `disconnect`). On an in-process bus with a clock that moves only when the test moves it.
@Suite("Device: replies to refused messages are limited (3.4)")
struct RefusalReplyLimitTests {
    struct Rig {
        let bus = InProcessBus()
        let clock = ManualClock()
        let profile: DeviceProfile
        let device: Device
        var devId: String { profile.identity.devId }

        init(_ profile: DeviceProfile) async throws {
            self.profile = profile
            let options = Device.clientOptions(profile: profile, connection: MQTTClientOptions(clientID: ""))
            device = try Device(profile: profile, transport: bus.transport(options: options), clock: clock)
            try await device.start()
            #expect(await device.waitUntilConnected(timeout: .seconds(30)))
        }

        func send(_ envelope: Envelope) { bus.publish(topic: profile.resolvedTopics.in, payload: envelope.encoded()) }

        /// An event for a session the device does not have (refused: `stop` `undefined_session`).
        func stray(from sender: String, _ i: Int) {
            send(CallMessage(event: .hangUp, curId: sender, targetId: devId, sessionId: "nosuch-\(i)").envelope(t: clock.nowSeconds()))
        }

        /// What the device published on its out topic, decoded.
        var out: [InboundMessage] {
            bus.published.filter { $0.topic == profile.resolvedTopics.out }
                .compactMap { try? InboundMessage.decode(payload: $0.payload).message }
        }

        var stops: [CallMessage] { out.compactMap { if case .call(let m) = $0, m.event == .stop { m } else { nil } } }

        var disconnects: [SignalHeader] {
            out.compactMap { if case .signal(let s) = $0, case .disconnect = s.body { s.header } else { nil } }
        }

        /// Sends a capability probe and waits for its answer: inbound messages are handled in
        /// order, so everything sent before it has been handled when it comes.
        func settle(_ reqId: String) async {
            send(AbilityQuery(curId: "probe", reqId: reqId).envelope(t: clock.nowSeconds()))
            let answered = await eventually(timeout: .seconds(10)) {
                out.contains { if case .abilityAnswer(let a) = $0, case .answer(_, reqId) = a.kind { true } else { false } }
            }
            #expect(answered, "the device did not answer probe \(reqId)")
        }
    }

    @Test("screen_ipc: 5 stops to one sender, 50 in all within a second; the rest counted by scope; a second later the budget is back")
    func screenIPC() async throws {
        let rig = try await Rig(.testDoorbell(household: ["u1"], answerPolicy: .manual))
        for i in 0..<10 { rig.stray(from: "mallory", i) }
        for i in 0..<100 { rig.stray(from: "m-\(i)", i) }
        // An offer with the wrong auth: refused, and its `disconnect` is a refusal reply too.
        let offer = SignalMessage(header: SignalHeader(from: "eve", to: rig.devId, sessionId: "live-1"),
                                  body: .offer(SignalOffer(sdp: "v=0\r\n", auth: "wrong")))
        rig.send(offer.envelope(t: rig.clock.nowSeconds()))
        await rig.settle("first")

        let stops = rig.stops
        #expect(stops.count == 50)
        #expect(stops.filter { $0.targetId == "mallory" }.count == 5)
        #expect(stops.allSatisfy { $0.reason == StopReason.undefinedSession.rawValue })
        #expect(rig.disconnects.isEmpty, "the refused offer's disconnect is over the device's 50")
        #expect(rig.device.refusals.droppedReplies == [.sender: 5, .device: 56])
        #expect(rig.device.refusals.totals[.call] == 110 && rig.device.refusals.totals[.signal] == 1, "every refusal still counted")

        // A genuine call at the limit still rings: its ring answers no refusal.
        let call = CallMessage(event: .call, curId: "u1", targetId: rig.devId, sessionId: "real",
                               timeout: rig.clock.nowMs() + 30_000, extra: CallExtra(category: "sp_dpsxj"))
        rig.send(call.envelope(t: rig.clock.nowSeconds()))
        await rig.settle("ring")
        #expect(rig.out.contains { if case .call(let m) = $0 { m.event == .ring && m.sessionId == "real" } else { false } })

        // A second later: replies again (the call rings on; the stray events leave it untouched).
        rig.clock.advance(byMs: 1000)
        rig.stray(from: "late", 1)
        rig.send(offer.envelope(t: rig.clock.nowSeconds()))
        await rig.settle("later")
        #expect(rig.stops.count == 51 && rig.stops.last?.targetId == "late")
        #expect(rig.disconnects.map(\.to) == ["eve"])
        #expect(await rig.device.status.session?.sessionId == "real")
        await rig.device.stop()
    }

    @Test("a doorbell kind: its §3 stop to a stray event is limited the same way, per sender")
    func doorbellKind() async throws {
        let rig = try await Rig(.testTuyaDoorbell(kind: .acDoorbell, household: ["u1"]))
        for i in 0..<20 { rig.stray(from: "mallory", i) }
        await rig.settle("first")
        #expect(rig.stops.count == 5)
        #expect(rig.device.refusals.droppedReplies == [.sender: 15, .device: 0])
        rig.clock.advance(byMs: 400)
        rig.stray(from: "mallory", 99)
        rig.stray(from: "eve", 100)
        await rig.settle("second")
        #expect(rig.stops.count == 6 && rig.stops.last?.targetId == "eve", "mallory is still over its 5 within the second")
        #expect(rig.device.refusals.droppedReplies == [.sender: 16, .device: 0])
        await rig.device.stop()
    }
}
