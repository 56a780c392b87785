import Foundation

/// One finished run of a program: its exit status and what it wrote.
public struct ProgramRun: Sendable {
    public var status: Int32
    /// Standard output (with standard error too when the run merged them).
    public var stdout: String { String(decoding: stdoutBytes, as: UTF8.self) }
    public var stderr: String { String(decoding: stderrBytes, as: UTF8.self) }
    public var stdoutBytes: [UInt8]
    public var stderrBytes: [UInt8]
    /// Everything the program wrote, stdout first.
    public var output: String { stdout + stderr }
}

/// Runs a program to completion without blocking Swift's cooperative threads (two on a 2-core
/// machine: a test that blocked one for a qemu run or an encode starved every other test running
/// beside it in `swift test`). Both pipes are drained at once on GCD threads, so a program that
/// fills its stderr while the other is read cannot stall.
///
/// - Parameters:
///   - mergeOutput: stderr goes to the same pipe as stdout (`stdoutBytes` holds both, interleaved).
///   - discardStderr: stderr goes to /dev/null.
///   - environment: added to this process's environment.
public func runProgram(
    _ path: String, _ arguments: [String], environment: [String: String] = [:],
    mergeOutput: Bool = false, discardStderr: Bool = false
) async throws -> ProgramRun {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    if !environment.isEmpty {
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }
    let out = Pipe()
    let err: Pipe? = mergeOutput || discardStderr ? nil : Pipe()
    process.standardOutput = out
    process.standardError = err ?? (discardStderr ? FileHandle.nullDevice : out)
    try process.run()
    let outData = Collected(Data()), errData = Collected(Data())
    return await withCheckedContinuation { (c: CheckedContinuation<ProgramRun, Never>) in
        let group = DispatchGroup()
        for (pipe, sink) in [(out, outData)] + (err.map { [($0, errData)] } ?? []) {
            group.enter()
            DispatchQueue.global().async {
                let d = pipe.fileHandleForReading.readDataToEndOfFile()
                sink.withLock { $0 = d }
                group.leave()
            }
        }
        DispatchQueue.global().async {
            group.wait()
            process.waitUntilExit()
            c.resume(returning: ProgramRun(status: process.terminationStatus,
                                           stdoutBytes: [UInt8](outData.snapshot), stderrBytes: [UInt8](errData.snapshot)))
        }
    }
}
