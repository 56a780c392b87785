import CMosquitto
#if canImport(Glibc)
import Glibc
#endif

/// Starting and reaping child processes (the broker, openssl, mosquitto_passwd) with posix_spawn.
/// The child gets /dev/null as stdin, a log file as stdout and stderr, default SIGPIPE handling,
/// and none of our other descriptors (an inherited MQTT socket would keep a dropped connection
/// alive in the child).
enum ChildProcess {
    enum Status: Equatable {
        case running
        case exited(Int32)
        case signaled(Int32)
    }

    static func spawn(
        executable: String, arguments: [String], outputPath: String
    ) throws(MosquittoBrokerError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        _ = ipcemu_spawn_close_from(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard rc == 0 else {
            throw .system("cannot start \(executable): \(errnoDescription(rc))")
        }
        return pid
    }

    /// The child's status; with `wait`, blocks until it has ended. Reaps it once ended.
    static func status(of pid: pid_t, wait: Bool) -> Status {
        var raw: Int32 = 0
        var result: pid_t
        repeat {
            result = waitpid(pid, &raw, wait ? 0 : WNOHANG)
        } while result < 0 && errno == EINTR
        if result == 0 { return .running }
        if result < 0 { return .exited(-1) }  // not our child any more (already reaped)
        let signal = raw & 0x7f
        return signal == 0 ? .exited((raw >> 8) & 0xff) : .signaled(signal)
    }

    /// Waits up to `timeout` seconds for the child to end.
    static func waitForExit(_ pid: pid_t, timeout: Double) -> Status {
        let deadline = monotonicSeconds() + timeout
        while true {
            let current = status(of: pid, wait: false)
            if current != .running || monotonicSeconds() >= deadline { return current }
            usleep(5_000)
        }
    }

    /// Runs a tool to completion; throws with its output if it fails.
    static func run(
        _ executable: String, _ arguments: [String], logPath: String, timeout: Double = 30
    ) throws(MosquittoBrokerError) {
        let pid = try spawn(executable: executable, arguments: arguments, outputPath: logPath)
        let result = waitForExit(pid, timeout: timeout)
        if result == .running {
            kill(pid, SIGKILL)
            _ = status(of: pid, wait: true)
        }
        guard result == .exited(0) else {
            let name = executable.split(separator: "/").last.map(String.init) ?? executable
            throw .toolFailed("\(name) \(arguments.joined(separator: " ")) -> \(result): \(readText(logPath).suffix(800))")
        }
    }

    /// The executable `name` from the given directories or PATH, or nil.
    static func find(_ name: String, preferring directories: [String] = []) -> String? {
        if name.contains("/") { return access(name, X_OK) == 0 ? name : nil }
        let path = getenv("PATH").map { String(cString: $0) } ?? ""
        let candidates = directories + path.split(separator: ":").map(String.init)
            + ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin", "/sbin", "/bin"]
        for directory in candidates where !directory.isEmpty {
            let full = directory.hasSuffix("/") ? directory + name : directory + "/" + name
            if access(full, X_OK) == 0 { return full }
        }
        return nil
    }
}

// MARK: Small file helpers (no Foundation needed)

func readText(_ path: String) -> String {
    guard let file = fopen(path, "r") else { return "" }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = fread(&buffer, 1, buffer.count, file)
        if count <= 0 { break }
        bytes.append(contentsOf: buffer[0..<count])
    }
    return String(decoding: bytes, as: UTF8.self)
}

func writeText(_ text: String, to path: String, mode: mode_t = 0o600) throws(MosquittoBrokerError) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
    guard fd >= 0 else { throw .system("cannot write \(path): \(errnoDescription(errno))") }
    defer { close(fd) }
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if written < 0 {
            if errno == EINTR { continue }
            throw .system("cannot write \(path): \(errnoDescription(errno))")
        }
        offset += written
    }
}

func makeTemporaryDirectory(prefix: String) throws(MosquittoBrokerError) -> String {
    let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    var template = Array("\(base)/\(prefix)-XXXXXX".utf8CString)
    let created = template.withUnsafeMutableBufferPointer { buffer -> Bool in
        guard let base = buffer.baseAddress else { return false }
        return mkdtemp(base) != nil
    }
    guard created else { throw .system("mkdtemp in \(base): \(errnoDescription(errno))") }
    return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Deletes a directory tree (files and subdirectories).
func removeTree(_ path: String) {
    guard let directory = opendir(path) else {
        unlink(path)
        return
    }
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        if name == "." || name == ".." { continue }
        let full = path + "/" + name
        var info = stat()
        if lstat(full, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            removeTree(full)
        } else {
            unlink(full)
        }
    }
    closedir(directory)
    rmdir(path)
}
