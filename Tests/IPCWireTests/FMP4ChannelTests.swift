import Testing
@testable import IPCWire

/// PROTOCOL.md 7: the text handshake and the 4-byte framing of the `fmp4Stream` data channel.
@Suite("fmp4Stream data channel: text messages, handshake, framing")
struct FMP4ChannelTests {
    // MARK: Text messages

    @Test func controlMessagesAreTheExactTexts() {
        #expect(FMP4ControlMessage.codecHEVC.text == #"{"type":"codec","msg":"hevc"}"#)
        #expect(FMP4ControlMessage.startFMP4.text == #"{"type":"start","msg":"fmp4"}"#)
        #expect(FMP4ControlMessage.recv.text == #"{"type":"recv","msg":""}"#)
        #expect(FMP4ControlMessage.complete.text == #"{"type":"complete","msg":""}"#)
        for message in [FMP4ControlMessage.codecHEVC, .startFMP4, .recv, .complete] {
            #expect((try? FMP4ControlMessage.decode(message.text)) == message)
        }
        #expect(FMP4ControlMessage.channelLabel == "fmp4Stream")
    }

    @Test func badTextIsAClearError() {
        let cases: [(String, String)] = [
            ("not json", "not valid JSON"),
            ("[1]", "must be object"),
            (#"{"msg":"hevc"}"#, "missing required field 'type'"),
            (#"{"type":"codec"}"#, "missing required field 'msg'"),
            (#"{"type":7,"msg":""}"#, "'type' must be string"),
            (#"{"type":"play","msg":""}"#, "codec, start, recv or complete"),
            (#"{"type":"recv","msg":"x"}"#, "for recv"),
            (String(repeating: " ", count: 2000) + "{}", "exceeds"),
        ]
        for (text, words) in cases {
            do {
                _ = try FMP4ControlMessage.decode(text)
                Issue.record("decoded \(text)")
            } catch {
                #expect("\(error)".contains(words), "\(error)")
            }
        }
    }

    // MARK: Handshake

    @Test func deviceAndAppHandshakeInOrder() {
        var device = FMP4DeviceHandshake()
        var app = FMP4AppHandshake()
        let opened = device.channelOpened()
        #expect(opened.send == [.codecHEVC])
        #expect(device.channelOpened().send.isEmpty)  // once
        let start = app.received(opened.send[0].text)
        #expect(start.send == [.startFMP4] && app.codec == "hevc")
        let recv = device.received(start.send[0].text)
        #expect(recv.send == [.recv] && !recv.startStreaming)
        let complete = app.received(recv.send[0].text)
        #expect(complete.send == [.complete] && app.state == .receiving)
        let go = device.received(complete.send[0].text)
        #expect(go.startStreaming && go.send.isEmpty && device.state == .streaming)
        #expect(app.received == [.codecHEVC, .recv])
    }

    @Test func outOfOrderHandshakeIsRefusedWithoutChangingState() {
        var device = FMP4DeviceHandshake()
        #expect(device.received(FMP4ControlMessage.startFMP4.text).refusal != nil)  // before open
        _ = device.channelOpened()
        let early = device.received(FMP4ControlMessage.complete.text)
        #expect(early.refusal?.contains("complete") == true && !early.startStreaming)
        #expect(device.state == .awaitingStart)
        #expect(device.received(#"{"type":"start","msg":"ts"}"#).refusal?.contains("fmp4") == true)
        #expect(device.received("{").refusal != nil)
        #expect(device.state == .awaitingStart)
        var app = FMP4AppHandshake()
        #expect(app.received(FMP4ControlMessage.recv.text).refusal != nil)
        #expect(app.state == .awaitingCodec)
    }

    // MARK: Framing

    @Test func segmentIsCutIntoFragmentsOfAtMost16KiB() throws {
        let segment = (0..<40_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let messages = try FMP4Framing.messages(for: segment, kind: .media, segmentNumber: 9)
        #expect(messages.count == 3)
        for (i, message) in messages.enumerated() {
            #expect(message.count <= 16 * 1024)
            #expect(Array(message.prefix(4)) == [1, 9, 3, UInt8(i + 1)])
        }
        #expect(messages[0].count == 16 * 1024)
        #expect(Array(messages.map { $0.dropFirst(4) }.joined()) == segment)
        var reassembler = FMP4Reassembler()
        #expect(try reassembler.accept(messages[0]) == nil)
        #expect(try reassembler.accept(messages[1]) == nil)
        #expect(try reassembler.accept(messages[2]) == FMP4Segment(kind: .media, number: 9, bytes: segment))
    }

    @Test func initializationSegmentIsOneFragmentNumberedOne() throws {
        let messages = try FMP4Framing.messages(for: [1, 2, 3], kind: .initialization, segmentNumber: 1)
        #expect(messages == [[0, 1, 1, 1, 1, 2, 3]])
        #expect(throws: FMP4FramingError.initializationSegmentSplit(fragments: 2)) {
            try FMP4Framing.messages(for: [UInt8](repeating: 0, count: 20_000), kind: .initialization, segmentNumber: 1)
        }
        #expect(throws: FMP4FramingError.self) { try FMP4Framing.messages(for: [], kind: .media, segmentNumber: 2) }
        let huge = [UInt8](repeating: 0, count: FMP4Framing.maximumSegmentSize + 1)
        #expect(throws: FMP4FramingError.segmentTooLarge(size: huge.count, limit: FMP4Framing.maximumSegmentSize)) {
            try FMP4Framing.messages(for: huge, kind: .media, segmentNumber: 2)
        }
    }

    @Test func badHeadersAreClearErrors() {
        let cases: [([UInt8], FMP4FramingError)] = [
            ([], .messageTooShort(size: 0)),
            ([1, 2, 1], .messageTooShort(size: 3)),
            ([2, 2, 1, 1, 9], .unknownKind(2)),
            ([1, 2, 0, 1, 9], .zeroFragmentCount(segment: 2)),
            ([1, 2, 1, 0, 9], .fragmentNumberOutOfRange(segment: 2, number: 0, count: 1)),
            ([1, 2, 1, 2, 9], .fragmentNumberOutOfRange(segment: 2, number: 2, count: 1)),
            ([1, 2, 1, 1], .emptyFragment(segment: 2, number: 1)),
            ([0, 1, 2, 1, 9], .initializationSegmentSplit(fragments: 2)),
            ([1, 2, 1, 1] + [UInt8](repeating: 0, count: 16 * 1024), .fragmentTooLarge(size: 16 * 1024, limit: 16 * 1024 - 4)),
        ]
        for (message, expected) in cases {
            var reassembler = FMP4Reassembler()
            #expect(throws: expected) { try reassembler.accept(message) }
            #expect(reassembler.stats.errors == 1)
            #expect(!"\(expected)".isEmpty)
        }
    }

    @Test func missingAndOutOfOrderFragmentsDropTheSegmentAndRecover() throws {
        let a = try FMP4Framing.messages(for: [UInt8](repeating: 1, count: 10), kind: .media, segmentNumber: 5, fragmentPayload: 4)
        let b = try FMP4Framing.messages(for: [UInt8](repeating: 2, count: 10), kind: .media, segmentNumber: 6, fragmentPayload: 4)
        var r = FMP4Reassembler()
        // Out of order: fragment 3 after 1.
        #expect(try r.accept(a[0]) == nil)
        #expect(throws: FMP4FramingError.unexpectedFragment(expected: "fragment 2 of segment 5", got: "fragment 3 of segment 5")) {
            try r.accept(a[2])
        }
        #expect(r.stats.segmentsDropped == 1)
        // A later fragment with nothing before it.
        #expect(throws: FMP4FramingError.self) { try r.accept(a[1]) }
        // Missing last fragment: the next segment's first one drops it and is taken.
        #expect(try r.accept(a[0]) == nil)
        #expect(try r.accept(a[1]) == nil)
        #expect(try r.accept(b[0]) == nil)
        #expect(r.stats.segmentsDropped == 2)
        #expect(try r.accept(b[1]) == nil)
        #expect(try r.accept(b[2])?.bytes == [UInt8](repeating: 2, count: 10))
        // A repeated first fragment starts the segment again (the partial one is counted as
        // dropped); a repeated later fragment is an error.
        #expect(try r.accept(b[0]) == nil)
        #expect(try r.accept(b[0]) == nil)
        #expect(r.stats.segmentsDropped == 3)
        #expect(try r.accept(b[1]) == nil)
        #expect(throws: FMP4FramingError.unexpectedFragment(expected: "fragment 3 of segment 6", got: "fragment 2 of segment 6")) {
            try r.accept(b[1])
        }
        // A fragment of another segment in the middle, and one whose count changed.
        #expect(try r.accept(a[0]) == nil)
        #expect(throws: FMP4FramingError.self) { try r.accept(b[1]) }
        #expect(try r.accept(a[0]) == nil)
        var changed = a[1]
        changed[2] = 4
        #expect(throws: FMP4FramingError.self) { try r.accept(changed) }
    }

    @Test func reassemblyLimitAndNumberGaps() throws {
        var small = FMP4Reassembler(segmentLimit: 6)
        let parts = try FMP4Framing.messages(for: [UInt8](repeating: 3, count: 8), kind: .media, segmentNumber: 2, fragmentPayload: 4)
        #expect(try small.accept(parts[0]) == nil)
        #expect(throws: FMP4FramingError.segmentTooLarge(size: 8, limit: 6)) { try small.accept(parts[1]) }

        var r = FMP4Reassembler()
        let segment: (FMP4SegmentKind, UInt8) throws -> [UInt8] = { kind, number in
            try FMP4Framing.messages(for: [number], kind: kind, segmentNumber: number)[0]
        }
        for (kind, number) in [(FMP4SegmentKind.initialization, UInt8(1)), (.media, 2), (.media, 3), (.media, 5)] {
            #expect(try r.accept(segment(kind, number))?.number == number)
        }
        #expect(r.stats.segmentNumberGaps == 1)
        // Wraps mod 256.
        var w = FMP4Reassembler()
        for number: UInt8 in [254, 255, 0, 1] { _ = try w.accept(segment(.media, number)) }
        #expect(w.stats.segmentNumberGaps == 0 && w.stats.segments == 4)
    }

    @Test func arbitraryBytesNeverTrap() {
        var generator = SystemRandomNumberGenerator()
        var r = FMP4Reassembler(segmentLimit: 100_000)
        for _ in 0..<5_000 {
            let length = Int.random(in: 0..<24, using: &generator)
            var message = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if length > 0 { message[0] &= 1 }
            if length > 3 { message[2] = message[2] % 4; message[3] = message[3] % 5 }
            _ = try? r.accept(message)
        }
        #expect(r.stats.messages == 5_000)
    }
}
