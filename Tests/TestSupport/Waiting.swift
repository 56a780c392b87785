import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Polls `condition` every `interval` until it holds or `timeout` passes; returns its last value.
@discardableResult
public func eventually(
    timeout: Duration = .seconds(5), interval: Duration = .milliseconds(10),
    _ condition: () -> Bool
) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    while true {
        if condition() { return true }
        if clock.now >= deadline { return false }
        try? await Task.sleep(for: interval)
    }
}

/// Polls an async `condition` every `interval` until it holds or `timeout` passes; returns its last value.
@discardableResult
public func eventually(
    timeout: Duration = .seconds(5), interval: Duration = .milliseconds(10),
    _ condition: () async -> Bool
) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    while true {
        if await condition() { return true }
        if clock.now >= deadline { return false }
        try? await Task.sleep(for: interval)
    }
}

/// A mutex-protected box for collecting values from handlers in tests.
public final class Collected<Value: Sendable>: Sendable {
    private let state: Mutex<Value>

    public init(_ value: Value) { state = Mutex(value) }

    public func withLock<T: Sendable>(_ body: (inout Value) -> T) -> T { state.withLock { body(&$0) } }
    public var snapshot: Value { state.withLock { $0 } }
}

/// A directory under $TMPDIR (or /tmp), deleted with its contents on deinit.
public final class TemporaryDirectory: @unchecked Sendable {
    public let path: String

    public init(prefix: String = "ipcemu-test") throws {
        let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array("\(base)/\(prefix)-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let start = buffer.baseAddress else { return false }
            return mkdtemp(start) != nil
        }
        guard made else { throw TemporaryDirectoryError(path: base, code: errno) }
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `path` + "/" + `name`.
    public func file(_ name: String) -> String { path + "/" + name }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

public struct TemporaryDirectoryError: Error, CustomStringConvertible {
    public let path: String
    public let code: Int32
    public var description: String { "cannot create a temporary directory in \(path): errno \(code)" }
}

/// The number of threads in this process (entries in /proc/self/task).
public func currentThreadCount() -> Int {
    guard let directory = opendir("/proc/self/task") else { return -1 }
    defer { closedir(directory) }
    var count = 0
    while let entry = readdir(directory) {
        let first = withUnsafeBytes(of: entry.pointee.d_name) { $0.first ?? 0 }
        if first != UInt8(ascii: ".") { count += 1 }
    }
    return count
}

/// The names of this process's threads (/proc/self/task/*/comm), e.g. "mqtt-fleet-0".
public func currentThreadNames() -> [String] {
    guard let directory = opendir("/proc/self/task") else { return [] }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
        let id = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        if id.hasPrefix(".") { continue }
        guard let file = fopen("/proc/self/task/\(id)/comm", "r") else { continue }
        var buffer = [CChar](repeating: 0, count: 64)
        if fgets(&buffer, Int32(buffer.count), file) != nil {
            let bytes = buffer.prefix { $0 != 0 && $0 != 10 }.map { UInt8(bitPattern: $0) }
            names.append(String(decoding: bytes, as: UTF8.self))
        }
        fclose(file)
    }
    return names
}
