import ArgumentParser
import CallRuntime
import Camera
import DeviceProfile
import IPCWire
import Scenario

// The values of the options that take one of a fixed set of words or numbers. Each is an
// `ExpressibleByArgument` type: `--help` lists the values, and a value outside them is refused by
// the argument parser with a message naming the option and the values it takes (exit 64). The
// commands read the engine's own type from each (`streamType`, `callType`, `policy`, ...), with
// no fallback. (`app listen --answer` is `ListenAnswer`, in AppDoorbellCommands.swift.)

/// `--stream`: which of the device's two video streams (PROTOCOL.md 4 `stream_type`).
enum StreamOption: String, CaseIterable, ExpressibleByArgument, Sendable {
    case main, sub

    var streamType: StreamType {
        switch self {
        case .main: .main
        case .sub: .sub
        }
    }

    /// The other one (`app call --switch-after` switches to it first).
    var other: StreamOption { self == .main ? .sub : .main }
}

/// `--call-type` (PROTOCOL.md 3 `callType`): 1 one-to-one, 2 one-to-more, 3 one-to-more special.
enum CallTypeOption: Int, CaseIterable, ExpressibleByArgument, Sendable {
    case oneToOne = 1
    case oneToMore = 2
    case oneToMoreSpecial = 3

    var callType: CallType {
        switch self {
        case .oneToOne: .oneToOne
        case .oneToMore: .oneToMore
        case .oneToMoreSpecial: .oneToMoreSpecial
        }
    }
}

/// `--channel-type` (PROTOCOL.md 3 `extra.channelType`): 0 audio, 1 video, 2 both.
enum ChannelTypeOption: Int, CaseIterable, ExpressibleByArgument, Sendable {
    case audio = 0
    case video = 1
    case audioVideo = 2

    var channelType: ChannelType {
        switch self {
        case .audio: .audio
        case .video: .video
        case .audioVideo: .audioVideo
        }
    }
}

/// `--log-format`: human-readable lines, or one JSON object per line.
enum LogFormatOption: String, CaseIterable, ExpressibleByArgument, Sendable {
    case human, json

    var format: LogFormat {
        switch self {
        case .human: .human
        case .json: .json
        }
    }
}

/// `--log-level`: the least severe level logged.
enum LogLevelOption: String, CaseIterable, ExpressibleByArgument, Sendable {
    case debug, info, warning, error

    var level: LogLevel {
        switch self {
        case .debug: .debug
        case .info: .info
        case .warning: .warning
        case .error: .error
        }
    }
}

/// `scenario run --app`: who plays the app users.
enum ScenarioAppOption: String, CaseIterable, ExpressibleByArgument, Sendable {
    case simulated, external

    var mode: AppMode {
        switch self {
        case .simulated: .simulated
        case .external: .external
        }
    }
}

/// `snapshot --format`: the V4L2 format to prefer. Any letter case is taken, and `yuy2` (GStreamer's
/// name) for `yuyv`.
enum CameraFormatOption: String, CaseIterable, ExpressibleByArgument, Sendable {
    case mjpeg, yuyv, nv12, i420, h264, h265

    init?(argument: String) {
        let word = argument.lowercased()
        self.init(rawValue: word == "yuy2" ? "yuyv" : word)
    }

    var pixelFormat: PixelFormat {
        switch self {
        case .mjpeg: .mjpeg
        case .yuyv: .yuyv
        case .nv12: .nv12
        case .i420: .i420
        case .h264: .h264
        case .h265: .h265
        }
    }
}

/// `--answer` of `run` and `fleet`: the device's answer policy. `answer` (also `auto`) answers at
/// once, `answer:SECONDS` after SECONDS; `reject`, `reject:SECONDS` (0: at once); `ignore` lets it
/// ring; `busy` replies busy; `manual` rings until the control API or console answers.
struct AnswerPolicyOption: ExpressibleByArgument, Sendable, Equatable {
    let policy: DeviceProfile.AnswerPolicy
    /// As it was typed (a fleet passes it on to its workers).
    let text: String

    init?(argument: String) {
        text = argument
        switch argument {
        case "answer", "auto": policy = .answer(afterSeconds: 0)
        case "reject": policy = .reject
        case "ignore": policy = .ignore
        case "busy": policy = .busy
        case "manual": policy = .manual
        default:
            if let s = Self.seconds(after: "answer:", in: argument) {
                policy = .answer(afterSeconds: s)
            } else if let s = Self.seconds(after: "reject:", in: argument) {
                policy = s > 0 ? .rejectAfter(seconds: s) : .reject
            } else {
                return nil
            }
        }
    }

    static var allValueStrings: [String] {
        ["answer", "answer:SECONDS", "auto", "reject", "reject:SECONDS", "ignore", "busy", "manual"]
    }

    var defaultValueDescription: String { text }

    /// The SECONDS of `PREFIX:SECONDS`: a finite number, 0 or more.
    private static func seconds(after prefix: String, in text: String) -> Double? {
        guard text.hasPrefix(prefix), let s = Double(text.dropFirst(prefix.count)), s >= 0, s.isFinite else { return nil }
        return s
    }
}
