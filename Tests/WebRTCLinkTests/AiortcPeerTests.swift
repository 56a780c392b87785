import Camera
import Foundation
import Testing
import TestSupport
import WebRTCLink

/// aiortc (PyPI), a WebRTC stack that is not GStreamer, as the app: it offers, our answerer
/// answers, and it must decode the device's H.264. Installs aiortc with pip when it is missing;
/// the test is skipped (with a loud message) only when that fails.
enum Aiortc {
    /// Whether aiortc imports (installing it once if not). Python's import takes seconds, pip
    /// longer: the check runs on a thread of its own (`offThePool`), never on a cooperative thread.
    static func isAvailable() async -> Bool { await offThePool { available } }

    private static let available: Bool = {
        if canImport() { return true }
        print("[aiortc] not installed: trying `python3 -m pip install aiortc`")
        _ = run("/usr/bin/env", ["python3", "-m", "pip", "install", "--quiet", "aiortc"])
        if canImport() { return true }
        print("""
            ################################################################################
            [aiortc] AIORTC COULD NOT BE INSTALLED: the aiortc interop test is SKIPPED.
            ################################################################################
            """)
        return false
    }()

    private static func canImport() -> Bool { run("/usr/bin/env", ["python3", "-c", "import aiortc"]) == 0 }

    private static func run(_ path: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }

    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("aiortc_offerer.py").path
    }
}

/// The python peer's stdout, one JSON object per line, collected on a background thread.
final class PeerOutput: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [[String: Any]] = []
    private var buffer = Data()
    private var rawLines: [String] = []

    func consume(_ data: Data) {
        lock.withLock {
            buffer.append(data)
            while let newline = buffer.firstIndex(of: 0x0A) {
                let line = buffer[buffer.startIndex..<newline]
                buffer = Data(buffer[(newline + 1)...])
                rawLines.append(String(decoding: line, as: UTF8.self))
                if let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any] { messages.append(object) }
            }
        }
    }

    func first(_ key: String) -> [String: Any]? { lock.withLock { messages.first { $0[key] != nil } } }
    var lines: [String] { lock.withLock { rawLines } }
}

extension LoopbackLinkTests {
    @Test(.enabled("aiortc (PyPI) is needed") { await Aiortc.isAvailable() })
    func anAiortcAppDecodesTheDevicesVideo() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Aiortc.script, "60", "30"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        let peerOutput = PeerOutput()
        output.fileHandleForReading.readabilityHandler = { handle in peerOutput.consume(handle.availableData) }
        try process.run()
        defer {
            output.fileHandleForReading.readabilityHandler = nil
            if process.isRunning { process.terminate() }
        }
        let writeLock = NSLock()
        let send: @Sendable ([String: Any]) -> Void = { object in
            guard let data = try? JSONSerialization.data(withJSONObject: object) else { return }
            writeLock.withLock { input.fileHandleForWriting.write(data + Data([0x0A])) }
        }

        #expect(try await waitUntil(seconds: 20) { peerOutput.first("offer") != nil }, "\(peerOutput.lines)")
        let offer = try #require(peerOutput.first("offer")?["offer"] as? String)
        let log = EventLog()
        // The device's own path (Emulator's P2PLink): the stamped test pattern (PROTOCOL.md 6) into
        // one shared encoder, its fan-out into the link as access units from a key frame on, a key
        // frame asked for when the link connects and on every PLI/FIR.
        let format = VideoFormat(width: 320, height: 240, fps: 30)
        let encoder = try SharedH264Encoder(video: format, input: .i420)
        try encoder.start()
        defer { encoder.stop() }
        let pattern = try TestPatternSource(width: 320, height: 240, fps: 30)
        try pattern.start { event in
            guard case .frame(let frame) = event else { return }
            _ = encoder.push(frame.bytes)
        }
        defer { pattern.stop() }
        let fanOut = encoder.fanOut
        let answerer = try WebRTCAnswerer(
            offer: offer, media: SendMedia(video: format, videoInput: .h264AccessUnits),
            options: LinkOptions(localAddresses: ["127.0.0.1"]),
            events: LinkEvents(
                localDescription: { sdp in send(["answer": sdp]) },
                localCandidate: { candidate in
                    send(["candidate": candidate.attributeLine, "sdpMLineIndex": candidate.sdpMLineIndex])
                },
                stateChanged: { state in
                    if state == .connected { fanOut.requestKeyFrame() }
                    log.append("\(state)")
                },
                keyFrameRequested: { fanOut.requestKeyFrame() }))
        defer { answerer.close() }
        #expect(answerer.plan.videoPayload?.packetizationMode == 1)
        #expect(answerer.plan.audioCodec == .pcma)
        try answerer.start()
        let subscription = fanOut.subscribe { accessUnit, isKeyFrame in
            _ = answerer.pushH264AccessUnit(accessUnit, isKeyFrame: isKeyFrame)
        }
        defer { fanOut.unsubscribe(subscription) }

        let finished = try await waitUntil(seconds: 40) { peerOutput.first("done") != nil || peerOutput.first("error") != nil }
        #expect(finished, "aiortc said: \(peerOutput.lines); device states \(log.entries)")
        let done = try #require(peerOutput.first("done"), "aiortc said: \(peerOutput.lines)")
        #expect(done["done"] as? Bool == true, "aiortc said: \(peerOutput.lines); device states \(log.entries)")
        #expect((done["video"] as? Int ?? 0) >= 60)
        #expect(done["width"] as? Int == 320 && done["height"] as? Int == 240)
        #expect((done["audio"] as? Int ?? 0) > 0)
        #expect(log.entries.contains("connected"))
        // PROTOCOL.md 6 read by an independent stack: every frame's stamp, and no frame missing
        // between the first decoded one and the last (issue 11: 0 frames lost for the whole call).
        #expect(done["stampErrors"] as? Int == 0, "aiortc said: \(done)")
        #expect((done["stamps"] as? Int ?? 0) >= 60, "aiortc said: \(done)")
        #expect(done["gaps"] as? Int == 0, "frames missing in the counter: \(done)")
        print("[aiortc] answer -> first frame \(done["firstFrameMs"] ?? "?") ms, its capture -> decode \(done["firstLatencyMs"] ?? "?") ms, \(done["stamps"] ?? 0) stamps read, \(done["gaps"] ?? 0) gaps")
    }
}
