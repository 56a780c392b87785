import Foundation
import MQTTTransport

/// The brokers of a fleet, in list order, and which one each device connects to (docs/fleet.md
/// "Several brokers"): what a broker cluster behind several listeners looks like to devices.
///
/// Device `devId` uses broker number `FNV-1a-64(UTF-8 bytes of devId) mod N`, N the length of the
/// list (FNV-1a 64-bit: offset basis 0xcbf29ce484222325, prime 0x100000001b3, xor then multiply,
/// byte by byte). It depends only on the devId and the list, never on the device's position, the
/// shard or the worker that holds it: every process of a fleet given the same list puts a device on
/// the same broker, and a tool outside can compute it.
public struct FleetBrokerList: Sendable, Equatable {
    /// Broker URLs (`mqtt://host:port` or `mqtts://host:port`), in list order, each once.
    public let urls: [String]

    /// The list from `--broker` values, in order: each a URL, or several separated by commas where
    /// a piece that is only a port number reuses the scheme, credentials and host of the piece
    /// before it (`mqtt://127.0.0.1:1883,1884,1885`). An empty or malformed piece, or a broker
    /// given twice, is refused with the piece named.
    public init(arguments: [String]) throws(FleetError) {
        var urls: [String] = []
        for argument in arguments {
            var previous: String?
            for piece in argument.split(separator: ",", omittingEmptySubsequences: false) {
                let text = piece.trimmingCharacters(in: .whitespaces)
                let url: String
                if text.contains("://") {
                    url = text
                } else if let previous, !text.isEmpty, text.allSatisfy(\.isASCIIDigit) {
                    url = try Self.replacingPort(of: previous, with: text, in: argument)
                } else {
                    throw .invalid("--broker '\(argument)': '\(text)' is neither a broker URL nor a port after one")
                }
                do {
                    _ = try MQTTBrokerEndpoint(url: url)
                } catch {
                    throw .invalid("--broker '\(argument)': \(error)")
                }
                guard !urls.contains(url) else { throw .invalid("--broker: \(url) is given twice") }
                urls.append(url)
                previous = url
            }
        }
        guard !urls.isEmpty else { throw .invalid("--broker: no broker given") }
        self.urls = urls
    }

    public init(urls: [String]) throws(FleetError) { try self.init(arguments: urls) }

    public var count: Int { urls.count }

    /// The index in `urls` of the broker `devId` connects to.
    public func index(of devId: String) -> Int { Self.index(of: devId, brokers: urls.count) }

    /// The URL of the broker `devId` connects to.
    public func url(of devId: String) -> String { urls[index(of: devId)] }

    /// `FNV-1a-64(devId) mod brokers` (0 when there are no brokers).
    public static func index(of devId: String, brokers: Int) -> Int {
        guard brokers > 1 else { return 0 }
        return Int(hash(devId) % UInt64(brokers))
    }

    /// FNV-1a, 64 bits, over the UTF-8 bytes of `devId` (wrapping arithmetic by definition).
    public static func hash(_ devId: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in devId.utf8 {
            h ^= UInt64(byte)
            h &*= 0x0000_0100_0000_01b3
        }
        return h
    }

    /// Private brokers (`ipcemu fleet` without `--broker`) that `devices` devices need: mosquitto
    /// holds one descriptor per client, and each inherits the fleet's raised limit
    /// (`descriptorLimit`), less `reserve` for its listener, log and epoll.
    public static func privateBrokersNeeded(devices: Int, descriptorLimit: Int, reserve: Int = privateBrokerReserve) -> Int {
        let perBroker = max(1, descriptorLimit - reserve)
        return max(1, (max(0, devices) + perBroker - 1) / perBroker)
    }

    /// Descriptors a private mosquitto keeps for itself (listeners, log, epoll, the bench's and the
    /// control plane's own clients).
    public static let privateBrokerReserve = 256

    /// `url` with its port replaced by `port` (the piece after the last ':' of the authority).
    private static func replacingPort(of url: String, with port: String, in argument: String) throws(FleetError) -> String {
        guard let scheme = url.range(of: "://") else { throw .invalid("--broker '\(argument)': no scheme before \(port)") }
        var authority = url[scheme.upperBound...]
        if let slash = authority.firstIndex(of: "/") { authority = authority[..<slash] }
        let hostEnd = authority.lastIndex(of: ":").flatMap { colon -> String.Index? in
            // An IPv6 literal's colons are inside [...]: only a colon after ']' starts a port.
            if let close = authority.lastIndex(of: "]"), colon < close { return nil }
            return colon
        } ?? authority.endIndex
        return String(url[..<scheme.upperBound]) + authority[..<hostEnd] + ":" + port
    }
}

extension Fleet.Options {
    /// The connection `devId` uses: its broker of `brokers` (FleetBrokerList's hash, list order), or
    /// `connection` when the fleet has one broker.
    func connection(for devId: String) -> MQTTClientOptions {
        guard brokers.count > 1 else { return brokers.first ?? connection }
        return brokers[FleetBrokerList.index(of: devId, brokers: brokers.count)]
    }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
