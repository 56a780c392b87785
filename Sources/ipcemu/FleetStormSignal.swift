import Dispatch
import Emulator
import Foundation
import Synchronization

/// SIGUSR1 to an `ipcemu fleet` process: a reconnect storm on every device of the process
/// (`Fleet.startReconnectStorm`: every connection dropped at once, brought back paced per broker
/// with jittered back-off). A supervisor passes the signal on to every worker first. When every
/// device of the process is back online it prints a note (`reconnect storm: N of N devices back
/// online in S s ...`; with --json a `note` line, relayed by a supervisor as `worker LO..<HI: ...`).
enum FleetStormSignal {
    /// The installed signal sources (kept alive for the process's life).
    private static let sources = Mutex<[any DispatchSourceSignal]>([])

    /// Installs the handler; `workers` gives the process ids to pass the signal on to.
    static func install(fleet: Fleet, output: FleetOutput, workers: @escaping @Sendable () -> [pid_t] = { [] }) {
        signal(SIGUSR1, SIG_IGN)   // the default action would end the process
        let queue = DispatchQueue(label: "ipcemu.storm-signal")
        sources.withLock { list in
            let source = DispatchSource.makeSignalSource(signal: SIGUSR1, queue: queue)
            source.setEventHandler {
                for pid in workers() { kill(pid, SIGUSR1) }
                Task {
                    let storm = await fleet.startReconnectStorm()
                    output.note("reconnect storm: dropped \(storm.devices) devices; bringing them back paced per broker")
                    let r = await storm.report()
                    output.note(String(format: "reconnect storm: %d of %d devices back online in %.3f s (%d retries, %d broker%@, window %d per broker)",
                                       r.backOnline, r.devices, r.seconds, r.retries, r.brokers, r.brokers == 1 ? "" : "s", r.window))
                }
            }
            source.resume()
            list.append(source)
        }
    }
}
