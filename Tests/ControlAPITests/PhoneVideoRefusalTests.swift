import ControlAPI
import Foundation
import IPCWire
import Testing

extension ControlAPI {
    @Suite("Console phone video: the device's refusal comes back through AppUser's 302 path")
    struct PhoneVideoRefusal {
        @Test("an offer the device cannot take: its 302 disconnect ends the wait with 502 naming close_reason; the phone shows the link refused")
        func refusedOffer() async throws {
            try await withControl(edit: { $0.behaviour.answerPolicy = .manual }, phone: true) { f in
                let phone = try #require(f.phone)
                try await f.request("POST", f.base + "/press", .object(["targets": .array([.string(phone.userId)])]))
                #expect(await phoneRings(phone))
                #expect(try await f.request("POST", "/api/phone/answer").status == 200)
                #expect(await f.waitForPhase(.answered))

                let started = ContinuousClock.now
                let reply = try await f.request("POST", "/api/phone/video", .object(["sdp": .string("v=0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\n")]))
                #expect(reply.status == 502, "\(reply.text.prefix(300))")
                #expect(reply.json?["error"]?.string?.contains("close_reason") == true, "\(reply.text.prefix(300))")
                // The refusal ended the wait (an event), not the 8 s answer timeout.
                #expect(ContinuousClock.now - started < .seconds(8))
                let video = try await f.request("GET", "/api/phone").json?["video"]?.string
                #expect(video == "refused" || video == "closed", "\(video ?? "nil")")
                #expect(try await f.request("POST", "/api/phone/hangup").status == 200)
            }
        }
    }
}
