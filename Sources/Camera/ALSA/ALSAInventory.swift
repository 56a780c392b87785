import Foundation

/// The sound cards' PCM devices as the kernel lists them in /proc/asound (`cards`, `pcm`): what a
/// Pi user needs for a profile's `audio.captureDevice` / `audio.playbackDevice` (a USB microphone
/// and speaker). ALSA's own software PCMs (`default`, `null`, `file`, dmix ...) are not in there.
public enum ALSAInventory {
    public struct PCM: Sendable, Equatable {
        public var cardIndex: Int
        /// The card's id (`[Device]` in /proc/asound/cards): stable across reboots, unlike the index.
        public var cardId: String
        public var cardName: String
        public var device: Int
        public var name: String
        public var playback: Bool
        public var capture: Bool

        /// The name to put in a profile: `plughw:` converts rate and format as needed.
        public var profileName: String { "plughw:CARD=\(cardId),DEV=\(device)" }
    }

    /// Reads /proc/asound (or another root, for tests). No cards (no sound driver, a container): [].
    public static func scan(root: String = "/proc/asound") -> [PCM] {
        let cards = (try? String(contentsOfFile: root + "/cards", encoding: .utf8)) ?? ""
        let pcm = (try? String(contentsOfFile: root + "/pcm", encoding: .utf8)) ?? ""
        return parse(cards: cards, pcm: pcm)
    }

    /// `cards`: ` 1 [Device         ]: USB-Audio - USB PnP Sound Device` (and a second, indented
    /// line per card); `pcm`: `01-00: USB Audio : USB Audio : playback 1 : capture 1`. Lines that
    /// do not read are skipped.
    public static func parse(cards: String, pcm: String) -> [PCM] {
        var ids: [Int: (id: String, name: String)] = [:]
        for line in cards.split(separator: "\n") {
            let text = line.trimmingCharacters(in: .whitespaces)
            guard let open = text.firstIndex(of: "["), let close = text.firstIndex(of: "]"), open < close,
                  let index = Int(text[..<open].trimmingCharacters(in: .whitespaces)) else { continue }
            let id = text[text.index(after: open)..<close].trimmingCharacters(in: .whitespaces)
            var name = String(text[text.index(after: close)...])
            if name.hasPrefix(":") { name.removeFirst() }
            if let dash = name.range(of: " - ") { name = String(name[dash.upperBound...]) }
            guard !id.isEmpty else { continue }
            ids[index] = (id, name.trimmingCharacters(in: .whitespaces))
        }
        var out: [PCM] = []
        for line in pcm.split(separator: "\n") {
            let fields = line.split(separator: ":", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard fields.count >= 3 else { continue }
            let numbers = fields[0].split(separator: "-")
            guard numbers.count == 2, let card = Int(numbers[0]), let device = Int(numbers[1]) else { continue }
            let rest = fields.dropFirst(3)
            let known = ids[card]
            out.append(PCM(
                cardIndex: card, cardId: known?.id ?? String(card), cardName: known?.name ?? "", device: device, name: fields[1],
                playback: rest.contains { $0.hasPrefix("playback") }, capture: rest.contains { $0.hasPrefix("capture") }))
        }
        return out
    }

    /// Text for `ipcemu cameras`.
    public static func render(_ pcms: [PCM]) -> String {
        guard !pcms.isEmpty else {
            return "ALSA: no sound cards (/proc/asound lists none); `default` and `null` still work\n"
        }
        var text = "ALSA sound devices (profile audio.captureDevice / audio.playbackDevice):\n"
        for p in pcms {
            let directions = [p.capture ? "capture" : nil, p.playback ? "playback" : nil].compactMap { $0 }.joined(separator: ", ")
            text += "  \(p.profileName)  \(p.cardName.isEmpty ? "" : p.cardName + ": ")\(p.name)  [\(directions)]\n"
        }
        return text
    }
}
