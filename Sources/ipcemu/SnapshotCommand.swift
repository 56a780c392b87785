import ArgumentParser
import Camera
import Emulator
import Dispatch
import Foundation
import Synchronization

/// `ipcemu snapshot OUT.jpg`: one frame from a camera, written as JPEG or PNG.
struct SnapshotCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Grab one frame from a camera and write it as JPEG (.jpg) or PNG (.png).",
        discussion: """
            The camera is the one of --profile (its camera section, at its main stream's size), or \
            one described by flags: --camera test-pattern | v4l2:/dev/videoN | v4l2:NAME | clip:FILE.h264.
            """
    )

    @Argument(help: "Output file: .jpg/.jpeg writes JPEG, .png writes PNG.")
    var output: String

    @Option(name: .long, help: "Device profile whose camera to use (overrides --camera, --size, --fps).")
    var profile: String?

    @Option(name: .long, help: "Which stream of the profile.")
    var stream: StreamOption = .main

    @Option(name: .long, help: "test-pattern, v4l2:/dev/videoN, v4l2:CARD-NAME, or clip:FILE (H.264 Annex B).")
    var camera = "test-pattern"

    @Option(name: .long, help: "Requested size, WIDTHxHEIGHT.")
    var size = "1280x720"

    @Option(name: .long, help: "Requested frame rate.")
    var fps: Double = 30

    @Option(name: .long, help: "V4L2 format to prefer, in any letter case; yuy2 is yuyv (default: automatic).")
    var format: CameraFormatOption?

    @Option(name: .long, help: "Frames to skip first (cameras adjust exposure on the first frames).")
    var skip = 0

    @Option(name: .long, help: "Seconds to wait for a frame.")
    var timeout: Double = 10

    @Option(name: .long, help: "JPEG quality, 1-100.")
    var quality = 90

    func validate() throws {
        guard Snapshot.ImageFormat(path: output) != nil else {
            throw ValidationError("output \"\(output)\" must end in .jpg, .jpeg or .png")
        }
        guard timeout > 0, skip >= 0 else { throw ValidationError("--timeout must be positive, --skip not negative") }
    }

    func run() throws {
        guard let image = Snapshot.ImageFormat(path: output) else { throw ValidationError("bad output name") }
        let config = try makeConfig()
        let source = try config.makeSource()
        let grabber = FrameGrabber(skip: skip, needsKeyFrame: true)
        try source.start { event in grabber.handle(event) }
        let result = grabber.wait(seconds: timeout)
        source.stop()
        guard let frame = result.frame else {
            throw SnapshotFailure("no frame from \(source.name) within \(formatSeconds(timeout)) s"
                                  + (result.lastStatus.map { " (\($0))" } ?? ""))
        }
        let bytes = try Snapshot.encode(frame, as: image, jpegQuality: quality)
        guard FileManager.default.createFile(atPath: output, contents: Data(bytes)) else {
            throw SnapshotFailure("cannot write \(output)")
        }
        print("\(output): \(image.rawValue.uppercased()) \(frame.width)x\(frame.height) from \(source.name) (frame #\(frame.sequence), \(frame.format))")
    }

    private func makeConfig() throws -> CameraConfig {
        if let profile {
            return CameraConfig(profile: try loadProfile(profile), stream: stream.streamType)
        }
        let kind = try CameraConfig.parseKind(camera)
        let (w, h) = try CameraConfig.parseSize(size)
        return CameraConfig(kind: kind, width: w, height: h, fps: fps, preferredFormat: format?.pixelFormat)
    }
}

struct SnapshotFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

private func formatSeconds(_ s: Double) -> String { s == s.rounded() ? String(Int(s)) : String(s) }

/// Waits for the first usable frame a source delivers.
private final class FrameGrabber: Sendable {
    private struct State {
        var frame: Frame?
        var lastStatus: FrameSourceStatus?
        var skipped = 0
    }
    private let state = Mutex(State())
    /// Signalled once, when the frame is taken.
    private let taken = DispatchSemaphore(value: 0)
    private let skip: Int
    private let needsKeyFrame: Bool

    init(skip: Int, needsKeyFrame: Bool) {
        self.skip = skip
        self.needsKeyFrame = needsKeyFrame
    }

    func handle(_ event: FrameSourceEvent) {
        let tookIt: Bool = state.withLock { s in
            switch event {
            case .status(let status):
                if status != .stopped { s.lastStatus = status }
                return false
            case .frame(let f):
                guard s.frame == nil, !needsKeyFrame || f.isKeyFrame else { return false }
                if s.skipped < skip {
                    s.skipped += 1
                    return false
                }
                s.frame = f
                return true
            }
        }
        if tookIt { taken.signal() }
    }

    func wait(seconds: Double) -> (frame: Frame?, lastStatus: FrameSourceStatus?) {
        _ = taken.wait(timeout: .now() + .nanoseconds(Int(max(0, min(seconds, 1e9)) * 1e9)))
        return state.withLock { ($0.frame, $0.lastStatus) }
    }
}
