import AppSimulator
import CallEngine
import Foundation
import IPCWire
import MQTTTransport
import Testing
import TestSupport

/// The crashes of issue 10, sent to a real `ipcemu run` process: one MQTT message used to kill it
/// (integer overflow on a wire number; a trap in the SDP reader). The process must stay up, refuse
/// what is bad, and take a genuine call afterwards.
@Suite("ipcemu run: hostile messages", .serialized, .timeLimit(.minutes(8)), .heavy)
struct HostileInputRunTests {
    let doorbell = packageRootPath + "/device-profiles/doorbell.yaml"
    let devId = "ipcemu-doorbell-0001"

    private func envelope(_ proto: Int, _ data: String) -> [UInt8] {
        Array(#"{"protocol":\#(proto),"t":\#(Int(Date().timeIntervalSince1970)),"data":\#(data)}"#.utf8)
    }

    private func call(session: String, _ fields: String) -> [UInt8] {
        envelope(308, #"{"type":"rtc","data":{"event":"call","curId":"user-mallory","targetId":"\#(devId)","sessionId":"\#(session)","extra":{"bizType":"screen_ipc","channelType":2},\#(fields)}}"#)
    }

    @Test("overflowing numbers and malformed SDP: the process stays up and still answers a call")
    func survives() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let run = try IPCEmuProcess(["run", "--profile", doorbell, "--broker", broker.url, "--answer", "answer:0"])
        #expect(await run.waitFor("is online"), "stdout: \(run.stdout)\nstderr: \(run.stderr)")
        let raw = try MQTTClient(options: broker.clientOptions(clientID: "mallory"))
        raw.connect()
        #expect(await raw.waitUntilConnected(timeout: .seconds(5)))
        let inTopic = "smart/device/in/\(devId)"
        let auth = P2PAuth.compute(p2pPassword: "doorbell-p2p-secret", localKey: "3f9c2b7a1d4e8f60", devId: devId)
        let sdp = #"v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\na=mid:0\r\na=recvonly\r\na=rtpmap:96 H264/90000\r\na=fmtp:96 =\r\n"#
        let payloads: [[UInt8]] = [
            // Once a trap in the timer table (the deadline minus now, then a Duration).
            call(session: "m1", #""timeout":9223372036854775807"#),
            envelope(308, #"{"type":"rtc","data":{"event":"hang_up","curId":"user-mallory","targetId":"\#(devId)","sessionId":"m1"}}"#),
            call(session: "m2", #""timeout":-9223372036854775808"#),
            call(session: "m3", #""timeout":1e300"#),
            envelope(308, #"{"type":"rtc","data":{"event":"hang_up","curId":"user-mallory","targetId":"\#(devId)","sessionId":"m3"}}"#),
            call(session: "m4", #""timeout":4102444800000,"callType":9223372036854775807"#),
            // Once a trap in the SDP reader.
            envelope(302, #"{"header":{"type":"offer","from":"user-mallory","to":"\#(devId)","sessionid":"m5"},"msg":{"mode":"webrtc","sdp":"\#(sdp)","auth":"\#(auth)","stream_type":0}}"#),
            envelope(302, #"{"header":{"type":"disconnect","from":"user-mallory","to":"\#(devId)","sessionid":"m5"},"msg":{"mode":"webrtc","close_reason":-9223372036854775808}}"#),
        ]
        for payload in payloads {
            try await raw.publishAndWaitForAck(topic: inTopic, payload: payload, qos: 1, retain: false, timeout: .seconds(3))
        }
        // The last one is refused in the log: every one before it was handled.
        #expect(await run.waitFor("m4", inStderr: true, timeout: .seconds(5)) || run.stdout.contains("m4"),
                "stderr: \(run.stderr)")
        #expect(run.process.isRunning, "ipcemu run died: \(run.stderr.suffix(2000))")

        let app = try AppUser(userId: "user-alice", connection: broker.clientOptions(clientID: "user-alice"))
        try await app.start()
        try await app.add(DeviceAddress(devId: devId))
        var events = await app.events().makeAsyncIterator()
        try await app.startCall(devId: devId, timeoutSeconds: 10)
        var answered = false
        while let e = await events.next() {
            if case .received(let m, _) = e, m.event == .answer { answered = true; break }
            if case .callEnded = e { break }
        }
        #expect(answered, "stderr: \(run.stderr.suffix(2000))")
        await app.stop()
        _ = await raw.disconnectAndWait(timeout: .seconds(1))
        raw.close()
        run.signal(SIGTERM)
        #expect(await run.waitForExit(timeout: .seconds(5)) == 0)
    }
}
