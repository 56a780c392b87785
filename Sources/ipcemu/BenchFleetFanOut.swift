import ControlAPI
import ControlAPISpec
import Foundation
import OpenAPIRuntime

/// What `bench media --fleet` reads of the fleet process's video fan-outs (issue 24 item 5): the
/// `ipcemu_video_fanout_*` series of its `/metrics`, so that frames lost inside the device (a
/// delivery lane too far behind, its links skipping to the next key frame) show beside what the
/// app side received.
struct FleetFanOutScrape: Sendable {
    /// Series name (without `ipcemu_video_fanout_`, `_total`) to value.
    var values: [String: Double] = [:]

    subscript(_ name: String) -> Double { values[name] ?? 0 }

    /// Reads the fleet's /metrics (its `--control` base URL, http://HOST:PORT); nil when it cannot.
    static func read(controlURL url: String?) async -> FleetFanOutScrape? {
        guard let url, let client = try? ControlClient(baseURL: url, token: nil, timeout: .seconds(10)),
              let output = try? await client.client.getMetrics(.init()),
              case .ok(let ok) = output, case .textPlainCharsetUtf8Version_0_0_4(let body) = ok.body,
              let text = try? await String(collecting: body, upTo: 8 << 20)
        else { return nil }
        return parse(text)
    }

    static func parse(_ text: String) -> FleetFanOutScrape {
        var scrape = FleetFanOutScrape()
        let prefix = "ipcemu_video_fanout_"
        for line in text.split(separator: "\n") where line.hasPrefix(prefix) {
            let parts = line.split(separator: " ")
            guard parts.count >= 2, let value = Double(parts[1]) else { continue }
            var name = String(parts[0].dropFirst(prefix.count))
            if name.hasSuffix("_total") { name.removeLast("_total".count) }
            scrape.values[name] = value
        }
        return scrape
    }

    /// The counts between `earlier` and this scrape (the subscribers as now).
    func since(_ earlier: FleetFanOutScrape) -> FleetFanOutScrape {
        var d = self
        for (name, value) in values where name != "subscribers" { d.values[name] = value - earlier[name] }
        return d
    }

    /// One line for the bench's output: what the encoder took and dropped at its input, what it
    /// made, what the links were handed, and what the lanes dropped.
    func summary(links: Int) -> String {
        let expected = self["access_units"] * Double(links)
        let delivered = self["deliveries"]
        let share = expected > 0 ? delivered / expected * 100 : 0
        return String(format: "%.0f frames into the encoders (%.0f dropped at their input), "
                      + "%.0f access units (%.0f key frames, %.0f forced of %.0f asked), %.0f handed to links (%.1f%% of units x %d links), "
                      + "%.0f lane overflows, %.0f deltas skipped waiting for a key frame, %.0f subscribers",
                      self["encoder_frames"], self["encoder_frames_dropped"],
                      self["access_units"], self["key_frames"], self["key_frames_forced"], self["key_frame_requests"], delivered, share, links,
                      self["lane_overflows"], self["deltas_skipped"], self["subscribers"])
    }
}
