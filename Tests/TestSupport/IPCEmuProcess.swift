import Foundation

/// The package root (the folder holding Package.swift), found from this file's path.
public let packageRootPath: String = {
    var url = URL(fileURLWithPath: #filePath)
    while url.path != "/" {
        url.deleteLastPathComponent()
        if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url.path }
    }
    return FileManager.default.currentDirectoryPath
}()

/// The built `ipcemu` binary: `$IPCEMU_BIN`, else `.build/debug/ipcemu`.
public var ipcemuBinary: String {
    if let fromEnv = ProcessInfo.processInfo.environment["IPCEMU_BIN"], !fromEnv.isEmpty { return fromEnv }
    return packageRootPath + "/.build/debug/ipcemu"
}

/// One finished run of `ipcemu` with its output.
public struct CLIRun: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String

    /// Runs `ipcemu arguments` to completion. The pipes are drained on GCD threads and the exit is
    /// awaited without blocking Swift's cooperative threads (only two on a 2-core machine).
    public static func ipcemu(_ arguments: [String]) async throws -> CLIRun {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ipcemuBinary)
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let outData = Collected(Data()), errData = Collected(Data())
        let group = DispatchGroup()
        for (pipe, sink) in [(out, outData), (err, errData)] {
            group.enter()
            DispatchQueue.global().async {
                let d = pipe.fileHandleForReading.readDataToEndOfFile()
                sink.withLock { $0 = d }
                group.leave()
            }
        }
        let exited = DispatchGroup()
        exited.enter()
        process.terminationHandler = { _ in exited.leave() }
        try process.run()
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                exited.wait()
                group.wait()
                c.resume()
            }
        }
        return CLIRun(status: process.terminationStatus,
                      stdout: String(decoding: outData.snapshot, as: UTF8.self),
                      stderr: String(decoding: errData.snapshot, as: UTF8.self))
    }
}

/// A long-running `ipcemu` (e.g. `run`) whose output a test watches while it runs.
public final class IPCEmuProcess: @unchecked Sendable {
    public let process = Process()
    private let lock = NSLock()
    private var out = ""
    private var err = ""

    public init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: ipcemuBinary)
        process.arguments = arguments
        let outPipe = Pipe(), errPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        outPipe.fileHandleForReading.readabilityHandler = { [weak self] h in
            let d = h.availableData
            guard !d.isEmpty, let self else { return }
            self.lock.lock(); self.out += String(decoding: d, as: UTF8.self); self.lock.unlock()
        }
        errPipe.fileHandleForReading.readabilityHandler = { [weak self] h in
            let d = h.availableData
            guard !d.isEmpty, let self else { return }
            self.lock.lock(); self.err += String(decoding: d, as: UTF8.self); self.lock.unlock()
        }
        try process.run()
    }

    public var stdout: String { lock.lock(); defer { lock.unlock() }; return out }
    public var stderr: String { lock.lock(); defer { lock.unlock() }; return err }

    /// Waits until standard output (or error) contains `text`.
    public func waitFor(_ text: String, inStderr: Bool = false, timeout: Duration = .seconds(10)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if (inStderr ? stderr : stdout).contains(text) { return true }
            if !process.isRunning { return (inStderr ? stderr : stdout).contains(text) }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    public func signal(_ sig: Int32) { kill(process.processIdentifier, sig) }

    /// Waits for the process to exit; returns its status, or nil if still running after `timeout`.
    public func waitForExit(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if !process.isRunning { return process.terminationStatus }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return process.isRunning ? nil : process.terminationStatus
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
