import Foundation

// A small reader of SDP text: the media sections, their direction and their RTP payloads.
// Enough to pick codecs from an offer and to check an answer; not a general SDP library.

public enum MediaDirection: String, Sendable, Hashable {
    case sendrecv, sendonly, recvonly, inactive

    /// Whether the side that wrote this section sends / receives.
    public var sends: Bool { self == .sendrecv || self == .sendonly }
    public var receives: Bool { self == .sendrecv || self == .recvonly }
}

public struct RTPPayloadFormat: Sendable, Hashable {
    public var payloadType: Int
    /// Upper-cased encoding name from `a=rtpmap` (or the static name for 0 and 8).
    public var encoding: String
    public var clockRate: Int
    public var channels: Int?
    /// `a=fmtp` parameters, keys lower-cased.
    public var parameters: [String: String]

    public var packetizationMode: Int { Int(parameters["packetization-mode"] ?? "0") ?? 0 }
    public var profileLevelID: String? { parameters["profile-level-id"]?.lowercased() }
}

public struct MediaSection: Sendable, Hashable {
    public var index: Int
    /// "video", "audio", "application", ...
    public var kind: String
    public var direction: MediaDirection
    public var mid: String?
    /// In the order of the m= line (the writer's preference).
    public var payloads: [RTPPayloadFormat]
    public var rtcpMux: Bool
}

public struct SessionDescriptionSummary: Sendable, Hashable {
    public var sections: [MediaSection]
    /// The mids of `a=group:BUNDLE`, empty when there is none.
    public var bundle: [String]

    /// Reads SDP text (CRLF or LF line ends). Throws `invalidOffer` when it has no `v=` or no m= line.
    public init(parsing text: String) throws(WebRTCLinkError) {
        let lines = text.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline)
            .map(String.init)
        guard lines.first?.hasPrefix("v=") == true else { throw .invalidOffer("not SDP: no v= line first") }
        var sections: [MediaSection] = []
        var bundle: [String] = []
        var sessionDirection: MediaDirection = .sendrecv
        var current: MediaSection?
        var rtpmaps: [Int: (String, Int, Int?)] = [:]
        var fmtps: [Int: [String: String]] = [:]
        var order: [Int] = []

        func finish() {
            guard var section = current else { return }
            section.payloads = order.map { pt in
                let map = rtpmaps[pt] ?? Self.staticPayload(pt)
                return RTPPayloadFormat(
                    payloadType: pt, encoding: map.0, clockRate: map.1, channels: map.2, parameters: fmtps[pt] ?? [:])
            }
            sections.append(section)
            current = nil
            rtpmaps = [:]
            fmtps = [:]
            order = []
        }

        for line in lines {
            if line.hasPrefix("m=") {
                finish()
                let fields = line.dropFirst(2).split(separator: " ")
                guard fields.count >= 3 else { throw .invalidOffer("malformed m= line: \(line)") }
                order = fields.dropFirst(3).compactMap { Int($0) }
                current = MediaSection(
                    index: sections.count, kind: String(fields[0]), direction: sessionDirection, mid: nil,
                    payloads: [], rtcpMux: false)
                continue
            }
            guard line.hasPrefix("a=") else { continue }
            let attribute = line.dropFirst(2)
            if let direction = MediaDirection(rawValue: String(attribute)) {
                if current != nil { current?.direction = direction } else { sessionDirection = direction }
            } else if attribute.hasPrefix("group:BUNDLE") {
                bundle = attribute.dropFirst("group:BUNDLE".count).split(separator: " ").map(String.init)
            } else if attribute.hasPrefix("mid:") {
                current?.mid = String(attribute.dropFirst(4))
            } else if attribute == "rtcp-mux" {
                current?.rtcpMux = true
            } else if attribute.hasPrefix("rtpmap:") {
                let body = attribute.dropFirst(7)
                let parts = body.split(separator: " ", maxSplits: 1)
                guard parts.count == 2, let pt = Int(parts[0]) else { continue }
                let codec = parts[1].split(separator: "/")
                guard let name = codec.first else { continue }
                let rate = codec.count > 1 ? Int(codec[1]) ?? 0 : 0
                let channels = codec.count > 2 ? Int(codec[2]) : nil
                rtpmaps[pt] = (name.uppercased(), rate, channels)
            } else if attribute.hasPrefix("fmtp:") {
                let body = attribute.dropFirst(5)
                let parts = body.split(separator: " ", maxSplits: 1)
                guard parts.count == 2, let pt = Int(parts[0]) else { continue }
                var parameters: [String: String] = [:]
                for pair in parts[1].split(separator: ";") {
                    // `a=fmtp:96 =` or `;=;` has no key: skip it (never index what split returned).
                    let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                    guard let rawKey = kv.first else { continue }
                    let key = rawKey.trimmingSpaces.lowercased()
                    guard !key.isEmpty else { continue }
                    parameters[key] = kv.count > 1 ? kv[1].trimmingSpaces : ""
                }
                fmtps[pt] = parameters
            }
        }
        finish()
        guard !sections.isEmpty else { throw .invalidOffer("SDP has no m= line") }
        self.sections = sections
        self.bundle = bundle
    }

    private static func staticPayload(_ pt: Int) -> (String, Int, Int?) {
        switch pt {
        case 0: return ("PCMU", 8000, 1)
        case 8: return ("PCMA", 8000, 1)
        case 9: return ("G722", 8000, 1)
        default: return ("", 0, nil)
        }
    }

    public func firstSection(kind: String) -> MediaSection? { sections.first { $0.kind == kind } }
}

extension MediaSection {
    /// The H.264 payload the device sends: packetization-mode 1, and among those a constrained
    /// baseline profile-level-id (42e0xx, 42c0xx, then any 42xxxx), else the first mode-1 H.264.
    public var preferredH264: RTPPayloadFormat? {
        let candidates = payloads.filter { $0.encoding == "H264" && $0.packetizationMode == 1 }
        func rank(_ format: RTPPayloadFormat) -> Int {
            guard let id = format.profileLevelID, id.count == 6 else { return 3 }
            let profile = id.prefix(2)
            let constraints = Int(id.dropFirst(2).prefix(2), radix: 16) ?? 0
            if profile == "42" && constraints & 0x40 != 0 { return 0 }  // constraint_set1: constrained baseline
            if profile == "42" { return 1 }
            return 4
        }
        return candidates.enumerated().min { lhs, rhs in
            (rank(lhs.element), lhs.offset) < (rank(rhs.element), rhs.offset)
        }.map(\.element).flatMap { rank($0) < 4 ? $0 : nil }
    }

    public func payload(encoding: String) -> RTPPayloadFormat? {
        payloads.first { $0.encoding == encoding.uppercased() }
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        var text = self
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return String(text)
    }
}

/// Small, line-based edits of SDP text.
enum SDPEditing {
    /// Makes the `a=fmtp:<pt>` line of an H.264 payload carry this profile-level-id (replacing one
    /// that is there, or adding it; adding the fmtp line after the rtpmap if there is none).
    static func settingH264ProfileLevelID(in sdp: String, payloadType: Int, profileLevelID: String) -> String {
        var lines = sdp.components(separatedBy: "\r\n")
        let fmtpPrefix = "a=fmtp:\(payloadType) "
        if let index = lines.firstIndex(where: { $0.hasPrefix(fmtpPrefix) }) {
            let parameters = lines[index].dropFirst(fmtpPrefix.count).split(separator: ";")
                .map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.lowercased().hasPrefix("profile-level-id=") && !$0.isEmpty }
            lines[index] = fmtpPrefix + (parameters + ["profile-level-id=\(profileLevelID)"]).joined(separator: ";")
        } else if let rtpmap = lines.firstIndex(where: { $0.hasPrefix("a=rtpmap:\(payloadType) ") }) {
            lines.insert(fmtpPrefix + "packetization-mode=1;profile-level-id=\(profileLevelID)", at: rtpmap + 1)
        }
        return lines.joined(separator: "\r\n")
    }

    /// The answerer's DTLS role (RFC 5763): `a=setup:passive` (the answerer is the DTLS server)
    /// when the offer left the choice to it (`actpass`); an offer that says `active` or `passive`
    /// keeps webrtcbin's answer. As the server, the device finishes its handshake first and its
    /// first SRTP packets follow its last flight at once, instead of waiting for the app's.
    static func answeringAsDTLSServer(_ answer: String, offer: String) -> String {
        guard offer.contains("a=setup:actpass") else { return answer }
        return answer.replacingOccurrences(of: "a=setup:active", with: "a=setup:passive")
    }
}
