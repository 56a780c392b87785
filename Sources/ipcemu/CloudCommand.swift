import ArgumentParser
import CloudLink
import Foundation
import TuyaCloud

/// `ipcemu cloud`: the state a device keeps on a cloud (PROTOCOL.md 9, issue 21).
struct CloudCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cloud",
        abstract: "Show or erase what a device keeps of the Tuya cloud (its state folder).",
        subcommands: [Status.self, Unpair.self]
    )

    /// Which state folder: --state-dir, or the default one of --uuid.
    struct Location: ParsableArguments {
        @Option(help: "The state folder `ipcemu run --cloud tuya` used (its --state-dir).")
        var stateDir: String?

        @Option(help: "The uuid, for the default state folder (~/.local/state/ipcemu/tuya/<uuid>).")
        var uuid: String?

        func validate() throws {
            if stateDir == nil && uuid == nil { throw ValidationError("give --state-dir or --uuid") }
        }

        /// The state file: the uuid's, or the one `tuya-cloud-*.json` in --state-dir.
        func store() throws -> CloudStateStore {
            let directory = CloudRunOptions.stateDirectory(stateDir, uuid: uuid ?? "")
            if let uuid { return CloudStateStore(directory: directory, uuid: uuid) }
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
                .filter { $0.hasPrefix("tuya-cloud-") && $0.hasSuffix(".json") }.sorted()
            guard names.count <= 1 else {
                throw ValidationError("\(directory) holds the state of \(names.count) devices (\(names.joined(separator: ", "))): give --uuid")
            }
            guard let name = names.first else { return CloudStateStore(directory: directory, uuid: "(none)") }
            let uuid = String(name.dropFirst("tuya-cloud-".count).dropLast(".json".count))
            return CloudStateStore(directory: directory, uuid: uuid)
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the stored cloud state without its secrets (devId, region, endpoints, when it was written).",
            discussion: "Exits 0 when the device is activated, 1 when it is not (never paired, or unpaired), 2 when the file cannot be read."
        )

        @OptionGroup var location: Location

        @Flag(help: "Print JSON instead of text.")
        var json = false

        func run() async throws {
            let file = try location.store()
            let state: CloudState?
            switch file.load() {
            case .absent: state = nil
            case .loaded(let loaded): state = loaded
            case .corrupt(let why):
                note("ipcemu cloud status: \(why)")
                throw ExitCode(2)
            }
            var fields: [(String, String)] = [("stateFile", file.path)]
            if let state {
                fields.append(("uuid", state.uuid))
                fields.append(("activated", state.activation == nil ? "no" : "yes"))
                if let activation = state.activation {
                    fields.append(("devId", activation.devId))
                    fields.append(("schemaId", activation.schemaId))
                    fields.append(("dataPoints", "\(activation.dataPoints.count)"))
                    fields.append(("stdTimeZone", activation.stdTimeZone))
                } else if let previous = state.previousDevId {
                    fields.append(("previousDevId", previous))
                }
                fields.append(("region", state.region ?? "(none yet)"))
                fields.append(("env", state.env ?? "(none yet)"))
                if let endpoints = state.endpoints {
                    fields.append(("atop", "https://\(endpoints.atopHost)\(endpoints.atopPort == 443 ? "" : ":\(endpoints.atopPort)")\(endpoints.atopPath)"))
                    fields.append(("mqtt", "\(endpoints.mqttHost):\(endpoints.mqttPort)"))
                }
                if let attributes = try? FileManager.default.attributesOfItem(atPath: file.path),
                   let date = attributes[.modificationDate] as? Date {
                    fields.append(("writtenAt", ISO8601DateFormatter().string(from: date)))
                }
            } else {
                fields.append(("activated", "no"))
                fields.append(("note", "no state file: the device was never paired, or was unpaired"))
            }
            if json {
                var object: [String: String] = [:]
                for (key, value) in fields { object[key] = value }
                let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
                say(String(decoding: data, as: UTF8.self))
            } else {
                let width = fields.map(\.0.count).max() ?? 0
                say(fields.map { $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.1 }.joined(separator: "\n"))
            }
            if state?.activation == nil { throw ExitCode(1) }
        }
    }

    struct Unpair: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Erase the stored cloud state, as a CONNACK 5 does: the next `ipcemu run --cloud tuya` pairs again.",
            discussion: "Stop the running device first; the cloud itself still lists the device until it is removed in the app."
        )

        @OptionGroup var location: Location

        func run() async throws {
            let file = try location.store()
            let existed = FileManager.default.fileExists(atPath: file.path)
            do {
                try file.erase()
                say(existed ? "erased \(file.path)" : "nothing to erase: no state file in \(file.directory)")
            } catch {
                note("ipcemu cloud unpair: \(error)")
                throw ExitCode(2)
            }
        }
    }
}
