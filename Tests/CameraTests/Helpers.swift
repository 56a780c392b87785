import Foundation
import TestSupport

/// Paths and processes for tests that run the built executables and repository scripts.
enum TestEnvironment {
    /// The build products folder (.build/debug or release): where the test binary itself lives.
    static var productsDirectory: URL {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var url = URL(fileURLWithPath: exe)
        // .build/debug/ipcemuPackageTests.xctest (a file on Linux, a bundle elsewhere)
        while url.pathComponents.count > 1, !url.lastPathComponent.hasSuffix(".xctest") {
            url.deleteLastPathComponent()
        }
        return url.deletingLastPathComponent()
    }

    static func product(_ name: String) -> String { productsDirectory.appendingPathComponent(name).path }

    /// The repository root, from this file's path.
    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    struct Run {
        var status: Int32
        var output: String
    }

    /// Runs a program to completion (off the cooperative threads); stdout and stderr together.
    static func run(_ path: String, _ arguments: [String], environment: [String: String] = [:]) async throws -> Run {
        let run = try await runProgram(path, arguments, environment: environment, mergeOutput: true)
        return Run(status: run.status, output: run.stdout)
    }

    static func temporaryPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("ipcemu-\(getpid())-\(name)").path
    }
}
