import AppSimulator
import DeviceProfile
import Foundation
import IPCWire
import Testing
import WebRTCLink

extension EndToEnd {
    /// PROTOCOL.md 7 end to end through MQTT and real WebRTC: a profile listing H265 streams its
    /// stamped test pattern as H.265 in fMP4 over the `fmp4Stream` data channel the app opens.
    @Suite("HEVC over the fmp4Stream data channel (7)")
    struct HEVCDataChannel {
        static func hevcProfile(_ p: inout DeviceProfile) {
            VideoCall.smallVideo(&p)
            p.capabilities.video?.codecs = [.h264, .h265]
            p.capabilities.video?.sub = DeviceProfile.StreamFormat(width: 320, height: 180, fps: 15)
        }

        /// A light main stream: the counter of PROTOCOL.md 6 counts frames the source made, so an
        /// encoder starved of CPU (the whole suite on two cores) would show as drops that the
        /// channel did not cause.
        static func lightHEVCProfile(_ p: inout DeviceProfile) {
            hevcProfile(&p)
            p.capabilities.video?.main = DeviceProfile.StreamFormat(width: 320, height: 180, fps: 15)
        }

        @Test("probe lists H265; call -> fmp4Stream handshake in order -> every frame decoded, every stamp read, none dropped",
              .timeLimit(.minutes(8)))
        func hevcCall() async throws {
            try await withHarness(edit: Self.lightHEVCProfile) { h in
                let (alice, events) = try await h.app("user-alice")
                let ability = try await alice.fetchDeviceCallAbility(devId: h.devId)
                #expect(ability.videoCodecs == ["H264", "H265"])
                try await alice.startCall(devId: h.devId, timeoutSeconds: 10)
                #expect(await events.first { $0.receivedEvent(.answer) } != nil)
                let sid = try await alice.openVideo(hevc: true)

                #expect(await VideoCall.until(.seconds(25)) { (await alice.videoStats(sessionId: sid)?.framesDecoded ?? 0) >= 60 })
                let report = try #require(await alice.hevcReport(sessionId: sid))
                #expect(report.textsReceived == [#"{"type":"codec","msg":"hevc"}"#, #"{"type":"recv","msg":""}"#])
                #expect(report.textsSent == [#"{"type":"start","msg":"fmp4"}"#, #"{"type":"complete","msg":""}"#])
                #expect(report.initializationSegments == 1 && report.initializationSizes == ["hvc1 320x180"])
                #expect(report.errors == 0, "\(report.errorTexts)")
                // Nothing lost between the device's muxer and the decoder: segment numbers are
                // contiguous, and every media segment became a decoded frame.
                #expect(report.framing.segmentNumberGaps == 0 && report.framing.segmentsDropped == 0)
                #expect(report.keyFrames >= 1 && report.decoderError == nil)

                let stats = try #require(await alice.videoStats(sessionId: sid))
                // (Frames are read before segments: a segment in the decoder right now is one more.)
                #expect(await VideoCall.until(.seconds(3)) {
                    let decoded = await alice.videoStats(sessionId: sid)?.framesDecoded ?? -1
                    return await alice.hevcReport(sessionId: sid)?.mediaSegments == decoded
                })
                #expect(stats.width == 320 && stats.height == 180)
                #expect(stats.stampErrors == 0, "\(stats.summary)")
                #expect(stats.stampsRead == stats.framesDecoded)
                #expect(stats.framesDropped == 0, "\(stats.summary)")
                let p50 = try #require(stats.latencyPercentile(50))
                #expect(p50 > 0 && p50 < 1000, "\(stats.summary)")
                print("HEVC over fmp4Stream: \(stats.summary)")
                // The RTP video track was not offered: the device runs no H.264 encoder for it.
                let deviceStats = try #require(await h.device.mediaStats(sessionId: sid))
                #expect(deviceStats.videoFramesSent == 0)

                try await alice.hangUp()
                #expect(await VideoCall.until(.seconds(5)) { await h.device.mediaLinks.isEmpty })
            }
        }

        @Test("resolution main -> sub: a new initialisation segment at the new size, stamps still read", .timeLimit(.minutes(8)))
        func hevcSwitch() async throws {
            try await withHarness(edit: Self.hevcProfile) { h in
                let (alice, events) = try await h.app("user-alice")
                try await alice.startCall(devId: h.devId, timeoutSeconds: 10)
                #expect(await events.first { $0.receivedEvent(.answer) } != nil)
                let sid = try await alice.openVideo(hevc: true)
                #expect(await VideoCall.until(.seconds(25)) { (await alice.videoStats(sessionId: sid)?.framesDecoded ?? 0) >= 10 })
                let sentAt = Date()
                try await alice.switchStream(sessionId: sid, devId: h.devId, to: .sub)
                #expect(await VideoCall.until(.seconds(5)) { (await alice.videoStats(sessionId: sid)?.sizeChanges.count ?? 0) >= 1 })
                let stats = try #require(await alice.videoStats(sessionId: sid))
                let change = try #require(stats.sizeChanges.first)
                #expect(change.width == 320 && change.height == 180 && change.stampRead)
                #expect(change.at.timeIntervalSince(sentAt) < 1.0)
                let report = try #require(await alice.hevcReport(sessionId: sid))
                #expect(report.initializationSizes == ["hvc1 640x360", "hvc1 320x180"])
                #expect(report.errors == 0, "\(report.errorTexts)")
                #expect(stats.stampErrors == 0, "\(stats.summary)")
                try await alice.hangUp()
            }
        }

        @Test("a profile without H265 ignores fmp4Stream: no codec message, the call goes on", .timeLimit(.minutes(8)))
        func withoutH265() async throws {
            try await withHarness(edit: VideoCall.smallVideo) { h in
                let (alice, events) = try await h.app("user-alice")
                try await alice.startCall(devId: h.devId, timeoutSeconds: 10)
                #expect(await events.first { $0.receivedEvent(.answer) } != nil)
                let sid = try await alice.openVideo(hevc: true)
                // The link comes up (audio flows) and stays up; the channel stays silent.
                #expect(await VideoCall.until(.seconds(15)) {
                    (await alice.videoLinkStatistics(sessionId: sid)?.stats.audioBuffersReceived ?? 0) >= 25
                })
                let report = try #require(await alice.hevcReport(sessionId: sid))
                #expect(report.textsReceived.isEmpty && report.mediaSegments == 0)
                #expect(await h.device.mediaLinks.count == 1)
                try await alice.hangUp()
            }
        }
    }
}
