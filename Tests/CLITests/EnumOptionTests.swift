import Foundation
import Testing
import TestSupport

/// The options whose value is one of a fixed set (OptionValues.swift): the argument parser refuses
/// any other value before the command runs, naming the option and the values it takes (exit 64),
/// `--help` lists them, and every spelling users type (docs, scripts, fixtures) is still taken.
@Suite("enum options", .timeLimit(.minutes(3)))
struct EnumOptionTests {
    let doorbell = packageRootPath + "/device-profiles/doorbell.yaml"

    /// A bad value, the option it was given to, and the values the message must list.
    struct Refusal: CustomStringConvertible, Sendable {
        var arguments: [String]
        var option: String
        var value: String
        var allowed: [String]
        var description: String { arguments.joined(separator: " ") }
    }

    var refusals: [Refusal] {
        let answers = ["answer", "answer:SECONDS", "auto", "reject", "reject:SECONDS", "ignore", "busy", "manual"]
        let formats = ["mjpeg", "yuyv", "nv12", "i420", "h264", "h265"]
        return [
            Refusal(arguments: ["run", "--profile", doorbell, "--answer", "sometimes"], option: "--answer", value: "sometimes", allowed: answers),
            Refusal(arguments: ["run", "--profile", doorbell, "--answer", "answer:-1"], option: "--answer", value: "answer:-1", allowed: answers),
            Refusal(arguments: ["run", "--profile", doorbell, "--answer", "reject:soon"], option: "--answer", value: "reject:soon", allowed: answers),
            Refusal(arguments: ["run", "--profile", doorbell, "--log-format", "xml"], option: "--log-format", value: "xml", allowed: ["human", "json"]),
            Refusal(arguments: ["run", "--profile", doorbell, "--log-level", "loud"], option: "--log-level", value: "loud",
                    allowed: ["debug", "info", "warning", "error"]),
            Refusal(arguments: ["fleet", "--profile", doorbell, "--answer", "maybe"], option: "--answer", value: "maybe", allowed: answers),
            Refusal(arguments: ["fleet", "--profile", doorbell, "--log-format", "text"], option: "--log-format", value: "text", allowed: ["human", "json"]),
            Refusal(arguments: ["fleet", "--profile", doorbell, "--log-level", "verbose"], option: "--log-level", value: "verbose",
                    allowed: ["debug", "info", "warning", "error"]),
            Refusal(arguments: ["app", "call", "d", "--call-type", "7"], option: "--call-type", value: "7", allowed: ["1", "2", "3"]),
            Refusal(arguments: ["app", "call", "d", "--call-type", "one"], option: "--call-type", value: "one", allowed: ["1", "2", "3"]),
            Refusal(arguments: ["app", "call", "d", "--channel-type", "3"], option: "--channel-type", value: "3", allowed: ["0", "1", "2"]),
            Refusal(arguments: ["app", "call", "d", "--stream", "big"], option: "--stream", value: "big", allowed: ["main", "sub"]),
            Refusal(arguments: ["app", "listen", "--answer", "later"], option: "--answer", value: "later",
                    allowed: ["auto", "accept", "reject", "stop", "busy", "ignore", "manual"]),
            Refusal(arguments: ["press", "--call-type", "0"], option: "--call-type", value: "0", allowed: ["1", "2", "3"]),
            Refusal(arguments: ["scenario", "run", "x.yaml", "--app", "phone"], option: "--app", value: "phone", allowed: ["simulated", "external"]),
            Refusal(arguments: ["snapshot", "x.jpg", "--stream", "hd"], option: "--stream", value: "hd", allowed: ["main", "sub"]),
            Refusal(arguments: ["snapshot", "x.jpg", "--format", "rgb"], option: "--format", value: "rgb", allowed: formats),
            Refusal(arguments: ["bench", "media", "--stream", "2"], option: "--stream", value: "2", allowed: ["main", "sub"]),
        ]
    }

    @Test("A value outside the set is refused before the command runs, naming the option and every value it takes")
    func refusedNamingTheOption() async throws {
        for r in refusals {
            let run = try await CLIRun.ipcemu(r.arguments)
            #expect(run.status == 64, "\(r): status \(run.status), \(run.stderr)")
            #expect(run.stderr.contains("The value '\(r.value)' is invalid for '\(r.option) <"), "\(r): \(run.stderr)")
            for value in r.allowed {
                #expect(run.stderr.contains("'\(value)'") || run.stderr.contains("  - \(value)\n"), "\(r): \(value) not listed in \(run.stderr)")
            }
            #expect(run.stdout.isEmpty, "\(r): the command ran: \(run.stdout)")
        }
    }

    @Test("Every spelling in use is taken: the parse passes and a later check (a bad other option) is what stops the command")
    func acceptedSpellings() async throws {
        var cases: [([String], String)] = []
        for answer in ["answer", "auto", "answer:0", "answer:1.5", "reject", "reject:0", "reject:2", "ignore", "busy", "manual"] {
            cases.append((["run", "--profile", doorbell, "--answer", answer, "--shutdown-deadline", "0"], "--shutdown-deadline"))
        }
        for (format, level) in [("human", "debug"), ("json", "info"), ("human", "warning"), ("json", "error")] {
            cases.append((["run", "--profile", doorbell, "--log-format", format, "--log-level", level, "--shutdown-deadline", "0"],
                          "--shutdown-deadline"))
            cases.append((["fleet", "--profile", doorbell, "--log-format", format, "--log-level", level, "--threads", "0"], "--threads"))
        }
        cases.append((["fleet", "--profile", doorbell, "--answer", "reject:1", "--threads", "0"], "--threads"))
        for (call, channel, stream) in [("1", "2", "main"), ("2", "0", "sub"), ("3", "1", "main")] {
            cases.append((["app", "call", "d", "--call-type", call, "--channel-type", channel, "--stream", stream, "--timeout", "0"], "--timeout"))
        }
        for answer in ["auto", "accept", "reject", "stop", "busy", "ignore", "manual"] {
            cases.append((["app", "listen", "--answer", answer, "--calls", "0"], "--calls"))
        }
        for app in ["simulated", "external"] { cases.append((["scenario", "run", "--app", app], "scenario file")) }
        for format in ["mjpeg", "MJPEG", "yuyv", "YUY2", "yuy2", "nv12", "i420", "h264", "H265"] {
            cases.append((["snapshot", "x.txt", "--format", format, "--stream", "sub"], "must end in .jpg"))
        }
        for stream in ["main", "sub"] { cases.append((["bench", "media", "--stream", stream, "--calls", "0"], "--calls")) }
        for (arguments, laterError) in cases {
            let run = try await CLIRun.ipcemu(arguments)
            #expect(!run.stderr.contains("is invalid for"), "\(arguments): \(run.stderr)")
            #expect(run.stderr.contains(laterError), "\(arguments): \(run.stderr)")
        }
    }

    @Test("--help lists the values of each such option")
    func helpListsTheValues() async throws {
        for (arguments, listed) in [
            (["run", "--help"], ["(values: human, json; default: human)", "(values: debug, info, warning, error; default: info)",
                                 "answer:SECONDS", "reject:SECONDS"]),
            (["fleet", "--help"], ["(values: human, json; default: human)", "(values: debug, info, warning, error; default: warning)"]),
            (["app", "call", "--help"], ["(values: 1, 2, 3; default: 1)", "(values: 0, 1, 2; default: 2)", "(values: main, sub; default: main)"]),
            (["scenario", "run", "--help"], ["(values: simulated, external; default: simulated)"]),
            (["snapshot", "--help"], ["(values: mjpeg, yuyv, nv12, i420, h264, h265)"]),
        ] {
            let run = try await CLIRun.ipcemu(arguments)
            #expect(run.status == 0, "\(arguments): \(run.stderr)")
            // The help wraps at the terminal width: compare with the line breaks and indents taken out.
            let text = run.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            for words in listed { #expect(text.contains(words), "\(arguments): '\(words)' not in \(run.stdout)") }
        }
    }
}
