// Trickled ICE candidates merged into one SDP, for a peer that takes its description in one piece
// (a browser behind the console phone's one-request answer).
import Foundation

/// Puts trickled ICE candidates into an SDP (for a browser that gets the answer in one piece).
public enum SDPCandidates {
    /// `sdp` with each candidate added as an `a=candidate:` line at the end of the m-section its
    /// `mLineIndex` names (an index past the last section goes to the first: with BUNDLE one
    /// transport serves every section). Lines the SDP already has are not repeated; `a=` prefix and
    /// line ending are optional in the input; output lines end in CRLF.
    public static func merge(_ sdp: String, candidates: [(line: String, mLineIndex: Int)]) -> String {
        var lines = sdp.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
            .map { $0.hasSuffix("\r") ? String($0.dropLast()) : String($0) }
        while lines.last == "" { lines.removeLast() }
        let mStarts = lines.indices.filter { lines[$0].hasPrefix("m=") }
        guard !mStarts.isEmpty else { return lines.map { $0 + "\r\n" }.joined() }
        var additions: [Int: [String]] = [:]
        let existing = Set(lines)
        for c in candidates {
            var line = c.line.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !line.isEmpty else { continue }
            if !line.hasPrefix("a=") { line = "a=" + line }
            guard line.hasPrefix("a=candidate:"), !existing.contains(line) else { continue }
            let section = mStarts.indices.contains(c.mLineIndex) ? c.mLineIndex : 0
            if additions[section]?.contains(line) != true { additions[section, default: []].append(line) }
        }
        var out: [String] = []
        for (i, line) in lines.enumerated() {
            // The end of section k is just before m-line k+1 (or the end of the SDP).
            if let k = mStarts.firstIndex(of: i), k > 0 { out += additions[k - 1] ?? [] }
            out.append(line)
        }
        out += additions[mStarts.count - 1] ?? []
        return out.map { $0 + "\r\n" }.joined()
    }
}
