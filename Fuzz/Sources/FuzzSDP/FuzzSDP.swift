import IPCWire
@testable import WebRTCLink

// libFuzzer target: SDP and ICE candidate text from the wire (PROTOCOL.md 4): the SDP reader, the
// answer's profile-level-id edit, ICE server URLs, and candidate lines. Byte 0 picks the reader.
// Every input also goes through the fmp4Stream data channel readers (PROTOCOL.md 7): the text
// messages, the 4-byte framing, the fMP4 segments and H.265 parameter sets; none may trap.

func fuzzSDP(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let control = bytes.first else { return 0 }
    let text = String(decoding: bytes.dropFirst(), as: UTF8.self)
    switch control % 4 {
    case 0, 1:
        if let summary = try? SessionDescriptionSummary(parsing: text) {
            precondition(!summary.sections.isEmpty, "a summary without sections")
            for section in summary.sections {
                _ = section.preferredH264
                _ = section.payload(encoding: "PCMA")
                for payload in section.payloads {
                    _ = payload.packetizationMode
                    _ = payload.profileLevelID
                    precondition(payload.parameters[""] == nil, "an fmtp parameter without a name")
                }
                if let h264 = section.preferredH264 {
                    let edited = SDPEditing.settingH264ProfileLevelID(in: text, payloadType: h264.payloadType,
                                                                      profileLevelID: "42e01f")
                    _ = try? SessionDescriptionSummary(parsing: edited)
                }
            }
        }
    case 2:
        // A candidate as the wire carries it, then as a 302 message.
        let candidate = IPCWire.ICECandidate(candidate: text, sdpMLineIndex: Int(control >> 2))
        _ = candidate.wireLine
        _ = candidate.isEndOfCandidates
        let message = SignalMessage(header: SignalHeader(from: "u", to: "d", sessionId: "s"), body: .candidate(candidate))
        let payload = message.envelope(t: 1).encoded()
        _ = try? InboundMessage.decode(payload: payload)
    default:
        let parts = text.split(separator: "\u{0}", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        _ = ICEURL.turnServer(parts.first ?? "", username: parts.count > 1 ? parts[1] : "",
                              credential: parts.count > 2 ? parts[2] : "")
    }
    fuzzFMP4(Array(bytes.dropFirst()), text: text)
    return 0
}

/// PROTOCOL.md 7 readers: whatever the bytes, an error or a value, never a trap; a segment the
/// reader accepts converts to Annex B or fails cleanly.
private func fuzzFMP4(_ body: [UInt8], text: String) {
    _ = try? FMP4ControlMessage.decode(text)
    var reassembler = FMP4Reassembler(segmentLimit: 1 << 16)
    var depacketizer = FMP4Depacketizer()
    var at = 0
    while at < body.count {
        let length = min(body.count - at, 4 + Int(body[at] % 64))
        if let segment = try? reassembler.accept(Array(body[at..<(at + length)])) {
            _ = try? depacketizer.take(segment.bytes, isInitialization: segment.kind == .initialization)
        }
        at += length
    }
    _ = try? FMP4InitializationSegment(parsing: body)
    _ = try? FMP4MediaSegment(parsing: body)
    _ = try? HEVCSequenceInfo(sps: body)
    _ = try? HEVCParameterSets(decoderConfigurationRecord: body)
    if let sample = try? HEVCSample(annexB: body) {
        _ = try? HEVCSample.annexB(sample: sample.data, prefix: nil)
    }
}

/// libFuzzer's entry point (used when libFuzzer's own main runs the program).
@_cdecl("LLVMFuzzerTestOneInput")
public func llvmFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 { fuzzSDP(data, size) }
