import AppSimulator
import CallRuntime
import DeviceProfile
import Emulator
import Foundation
import IPCWire
import Testing
import WebRTCLink
import TestSupport

extension EndToEnd {
    /// PROTOCOL.md 8.6: a doorbell's speaker plays the app's voice only after the app's 312
    /// `speaker` 1, and stops at `speaker` 0: heard on the device's side through an ALSA file PCM.
    @Suite("Doorbells: the speaker over 312 (8.6)")
    struct DoorbellSpeaker {
        /// Loud 25 ms pieces of the app's 440 Hz tone (S16LE, 8 kHz) in what the device played.
        /// Reads at most `limit` bytes from `offset` (the null PCM behind the file takes audio as
        /// fast as it comes, so the file grows quickly: a check reads a window, never all of it).
        static func tonePieces(in path: String, from offset: Int = 0, limit: Int = 256_000) -> Int {
            guard let handle = FileHandle(forReadingAtPath: path) else { return 0 }
            defer { try? handle.close() }
            guard (try? handle.seek(toOffset: UInt64(max(0, offset)))) != nil,
                  let data = try? handle.read(upToCount: limit), !data.isEmpty else { return 0 }
            let bytes = [UInt8](data)[...]
            let base = bytes.startIndex
            let samples = stride(from: 0, to: bytes.count - 1, by: 2).map {
                Int16(bitPattern: UInt16(bytes[base + $0]) | UInt16(bytes[base + $0 + 1]) << 8)
            }
            var pieces = 0
            for start in stride(from: 0, to: max(0, samples.count - 200), by: 200) {
                let piece = samples[start..<(start + 200)]
                let rms = (piece.reduce(0.0) { $0 + Double($1) * Double($1) } / 200).squareRoot()
                let crossings = Double(zip(piece, piece.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count) / 199
                if rms > 1000, abs(crossings - 880.0 / 8000.0) < 0.03 { pieces += 1 }
            }
            return pieces
        }

        static func fileSize(_ path: String) -> Int {
            (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int).flatMap { $0 } ?? 0
        }

        @Test("8.6: muted until speaker 1; the app's tone is heard after it; speaker 0 mutes it again",
              .timeLimit(.minutes(5)), .enabled(if: FileManager.default.fileExists(atPath: "/usr/share/alsa/alsa.conf")))
        func speakerPlaysTheAppsTone() async throws {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ipcemu-speaker-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let played = dir + "/played.raw"
            try await withHarness(profile: "ac-doorbell.yaml", edit: {
                $0.behaviour.household = ["user-alice"]
                $0.capabilities.liveView = false
                $0.capabilities.video?.main = DeviceProfile.StreamFormat(width: 320, height: 240, fps: 15)
                $0.audio = DeviceProfile.Sound(source: .tone, playback: .alsa(device: "file:FILE='\(played)',FORMAT=raw"))
            }) { h in
                let (alice, _) = try await h.app("user-alice")
                let callId = try await h.device.press()
                #expect(await h.wire.waitForDoorbellPress() != nil)
                let accept = VideoDoorbellMessage(devId: h.devId, uid: "user-alice", event: .accept, eData: callId)
                try await h.sendRaw(h.seal(accept.envelope(t: WallClock.nowSeconds()).encoded()))
                #expect(await h.wire.waitForDoorbell(.answered) != nil)
                try await alice.openVideo(sendVideo: VideoFormat(width: 320, height: 240, fps: 15), sessionId: callId, devId: h.devId)

                // Muted: the app's audio reaches the sink (the file grows) but nothing loud is in it.
                #expect(await eventually(timeout: .seconds(15)) { Self.fileSize(played) > 16_000 },
                        "no audio reached the device's playback")
                #expect(Self.tonePieces(in: played, limit: 1 << 20) == 0, "the app's tone was heard before speaker 1")
                let beforeOn = Self.fileSize(played)

                func speaker(_ value: Int64) async throws {
                    let m = StreamControlMessage(type: .speaker, header: SignalHeader(from: "user-alice", to: h.devId, sessionId: callId),
                                                 body: .command(cmdValue: value))
                    try await h.sendRaw(h.seal(m.envelope(t: WallClock.nowSeconds()).encoded()))
                }
                try await speaker(1)
                #expect(await h.wire.waitForStreamControlReply(to: "user-alice")?.resCode == 0)
                // Read what was played after speaker 1, piece by piece as it grows, until the tone
                // has been heard long enough. (A generous limit: on a loaded machine the app's
                // audio comes in bursts with gaps; the wait ends as soon as the tone is heard.)
                var heard = 0
                var cursor = beforeOn
                _ = await eventually(timeout: .seconds(30)) {
                    let size = Self.fileSize(played)
                    guard size > cursor else { return false }
                    let step = min(size - cursor, 256_000) / 400 * 400
                    guard step > 0 else { return false }
                    heard += Self.tonePieces(in: played, from: cursor, limit: step)
                    cursor += step
                    return heard >= 5
                }
                #expect(heard >= 5, "the app's tone was not heard after speaker 1 (\(heard) loud pieces in \(cursor - beforeOn) bytes played)")

                try await speaker(0)
                #expect(await h.wire.waitForStreamControlReply(to: "user-alice", count: 2)?.resCode == 0)
                // Past the reply, what is played from a later mark holds no tone once the sink's
                // buffer has drained: the mark is taken after more audio has gone through.
                let grown = Self.fileSize(played) + 16_000
                #expect(await eventually(timeout: .seconds(10)) { Self.fileSize(played) > grown })
                let mark = Self.fileSize(played)
                #expect(await eventually(timeout: .seconds(10)) { Self.fileSize(played) > mark + 16_000 })
                #expect(Self.tonePieces(in: played, from: mark) == 0, "the tone went on after speaker 0")
            }
        }
    }
}
