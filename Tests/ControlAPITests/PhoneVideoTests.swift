import CallEngine
import ControlAPI
import Foundation
import IPCWire
import Testing
import WebRTCLink

/// What a webrtcbin offerer standing in for the browser produced and received.
final class BrowserStandIn: @unchecked Sendable {
    private let lock = NSLock()
    private var offer: String?
    private var candidates: [(line: String, mLineIndex: Int)] = []
    private var gathered = false
    private var frames = 0
    private var connected = false

    var events: LinkEvents {
        LinkEvents(
            localDescription: { sdp in self.lock.withLock { self.offer = sdp } },
            localCandidate: { c in
                self.lock.withLock {
                    if c.candidate.isEmpty { self.gathered = true } else { self.candidates.append((c.candidate, c.sdpMLineIndex)) }
                }
            },
            stateChanged: { s in if case .connected = s { self.lock.withLock { self.connected = true } } },
            videoFrame: { _ in self.lock.withLock { self.frames += 1 } })
    }

    /// The offer with its candidates in it, once gathering is complete (as the page sends it).
    func completeOffer(within timeout: Duration) async -> String? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let (o, c, done) = lock.withLock { (offer, candidates, gathered) }
            if let o, done { return SDPCandidates.merge(o, candidates: c) }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    var framesDecoded: Int { lock.withLock { frames } }
    var isConnected: Bool { lock.withLock { connected } }
}

extension ControlAPI {
    @Suite("Console phone video over HTTP (no browser)") struct PhoneVideo {
        @Test("POST /api/phone/video relays an offer with its candidates; the answer alone connects and video arrives; close ends the device's link")
        func offerAnswerOverHTTP() async throws {
            try await withControl(edit: { $0.behaviour.answerPolicy = .manual }, phone: true) { f in
                let phone = try #require(f.phone)
                try await f.request("POST", f.base + "/press", .object(["targets": .array([.string(phone.userId)])]))
                #expect(await phoneRings(phone))
                #expect(try await f.request("POST", "/api/phone/answer").status == 200)
                #expect(await f.waitForPhase(.answered))

                let browser = BrowserStandIn()
                let offerer = WebRTCOfferer(options: LinkOptions(localAddresses: ["127.0.0.1"]), events: browser.events)
                defer { offerer.close() }
                try offerer.start()
                let offer = try #require(await browser.completeOffer(within: .seconds(10)), "offerer gathered no candidates")
                #expect(offer.contains("a=candidate:"))

                let reply = try await f.request("POST", "/api/phone/video", .object(["sdp": .string(offer)]))
                #expect(reply.status == 200, "\(reply.text.prefix(300))")
                let answer = try #require(reply.json?["sdp"]?.string)
                #expect(answer.contains("a=candidate:"), "the device's candidates are in the answer")
                #expect(answer.contains("H264"))
                #expect(reply.json?["phone"]?["video"]?.string == "connecting" || reply.json?["phone"]?["video"]?.string == "up")
                // Only the answer: no trickled candidate reaches the offerer.
                try offerer.setRemoteAnswer(answer)

                let deadline = ContinuousClock.now + .seconds(10)
                while ContinuousClock.now < deadline, browser.framesDecoded < 10 { try await Task.sleep(for: .milliseconds(50)) }
                #expect(browser.isConnected)
                #expect(browser.framesDecoded >= 10, "frames decoded: \(browser.framesDecoded)")
                #expect(try await f.request("GET", "/api/phone").json?["video"]?.string == "up")
                #expect(await f.device.status.session?.mediaLink == .up)

                let closed = try await f.request("POST", "/api/phone/video/close")
                #expect(closed.status == 200)
                #expect(closed.json?["video"]?.string == "none")
                let gone = ContinuousClock.now + .seconds(3)
                while ContinuousClock.now < gone, await !f.device.mediaLinks.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
                #expect(await f.device.mediaLinks.isEmpty, "the device closed its link on disconnect")

                #expect(try await f.request("POST", "/api/phone/hangup").status == 200)
                let late = try await f.request("POST", "/api/phone/video", .object(["sdp": .string(offer)]))
                #expect(late.status == 409)
                #expect(late.json?["error"]?.string?.contains("no answered call") == true)
            }
        }
    }
}
