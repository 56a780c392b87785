import Foundation
@testable import MQTTTransport
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A Unix socket's full accept backlog (mosquitto 2.0.11 listens with 10): the nonblocking connect
/// fails with `EAGAIN`, and the client tries again within milliseconds instead of its back-off
/// (docs/fleet.md "Devices over Unix sockets").
@Suite("Unix socket backlog", .serialized)
struct UnixBacklogTests {
    @Test("The busy delays: 2 ms doubling to 32 ms, jittered, then none (the attempt fails with the back-off)")
    func busyDelays() {
        #expect(ClientConnection.busyRetryDelay(after: 0, random: 1) == 0.002)
        #expect(ClientConnection.busyRetryDelay(after: 1, random: 1) == 0.004)
        #expect(ClientConnection.busyRetryDelay(after: 4, random: 1) == 0.032)
        #expect(ClientConnection.busyRetryDelay(after: 19, random: 1) == 0.032)
        #expect(ClientConnection.busyRetryDelay(after: 0, random: 0.5) == 0.001)
        #expect(ClientConnection.busyRetryDelay(after: ClientConnection.busyRetryLimit) == nil)
        #expect(ClientConnection.busyRetryDelay(after: -1) == nil)
        let all = (0..<ClientConnection.busyRetryLimit).compactMap { ClientConnection.busyRetryDelay(after: $0, random: 1) }
        #expect(all.count == ClientConnection.busyRetryLimit && all.reduce(0, +) < 0.6)
    }

    @Test("A full backlog (mosquitto stopped): the client tries again every few ms, says disconnected only once those tries are spent, and is online as soon as mosquitto runs again")
    func fullBacklogRetriedQuickly() async throws {
        try await withBroker(MosquittoBroker.Configuration(logsWarnings: false, unixSockets: 1)) { broker in
            let pid = try #require(broker.pid)
            let path = broker.unixSocketPaths[0]
            #expect(kill(pid, SIGSTOP) == 0)
            var resumed = false
            defer { if !resumed { kill(pid, SIGCONT) } }
            // Fill the backlog: nonblocking connects until one fails with EAGAIN.
            var fillers: [Int32] = []
            defer { for fd in fillers { close(fd) } }
            var full = false
            for _ in 0..<64 where !full {
                let (fd, result) = nonblockingConnect(path: path)
                if result == 0 { fillers.append(fd) } else {
                    close(fd)
                    full = result == EAGAIN
                }
            }
            try #require(full, "the backlog did not fill: \(fillers.count) connects accepted")

            let client = try MQTTClient(options: MQTTClientOptions(brokerURL: broker.unixURLs[0], clientID: "ux-busy"))
            defer { client.close() }
            client.connect()
            // The back-off alone (0.1 s doubling) makes 6 attempts in 5 s; the quick retries make 8
            // in about 0.1 s. (Not a sleep and a count: a test task on a loaded machine may wake
            // seconds late, when the quick retries are long spent.)
            let quick = await eventually(timeout: .seconds(5), interval: .milliseconds(2)) {
                client.counters.connectAttempts >= 8
            }
            let state = client.state
            let attempts = client.counters.connectAttempts
            #expect(quick, "\(attempts) connect attempts in 5 s")
            // The quick retries come first: the attempt fails (and the client says disconnected)
            // only once all of them found the backlog full.
            if case .disconnected = state {
                #expect(attempts > ClientConnection.busyRetryLimit, "disconnected after \(attempts) attempts: \(state)")
            }

            #expect(kill(pid, SIGCONT) == 0)
            resumed = true
            let began = ContinuousClock.now
            #expect(await client.waitUntilConnected(timeout: .seconds(5)))
            let waited = ContinuousClock.now - began
            #expect(waited < .seconds(2), "connected \(waited) after mosquitto resumed")
        }
    }
}

/// A nonblocking connect to the Unix socket at `path`: the descriptor and 0, or errno.
private func nonblockingConnect(path: String) -> (Int32, Int32) {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
    guard fd >= 0 else { return (fd, errno) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (i, b) in bytes.prefix(raw.count - 1).enumerated() { raw[i] = b }
    }
    let rc = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    return (fd, rc == 0 ? 0 : errno)
}
