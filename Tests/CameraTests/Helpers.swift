import Foundation

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

    /// Runs a program to completion; stdout and stderr together.
    static func run(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    static func temporaryPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("ipcemu-\(getpid())-\(name)").path
    }
}
