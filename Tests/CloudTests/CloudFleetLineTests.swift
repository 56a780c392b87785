import CloudLink
import IPCWire
import Testing

/// The cloud fleet's stdout lines are read with the same shared decoding as the broker fleet's
/// (`JSONLineDecoding`, IPCWire): a line that is not one is an error naming the field.
@Suite("Cloud fleet lines")
struct CloudFleetLineTests {
    @Test("A line that is not a cloud fleet line is an error naming the field", arguments: [
        (#"{"event":"note"}"#, "field 'message' is missing"),
        (#"{"event":"exploded"}"#, "field 'event' is none of note, cloud, pairing, paced, refused, online, summary, stopped"),
        (#"{"message":"hi"}"#, "field 'event' is missing"),
        (#"{"event":"note","message":5}"#, "field 'message' is not a string"),
        ("not json", "not JSON"),
    ])
    func refused(_ line: String, _ expected: String) {
        #expect(throws: CloudFleetLineError.self) { try CloudFleetLine(jsonLine: Array(line.utf8)) }
        do {
            _ = try CloudFleetLine(jsonLine: Array(line.utf8))
        } catch {
            #expect(error.description.hasPrefix(expected), "\(line): \(error.description)")
        }
    }

    @Test("A note round-trips")
    func roundTrip() throws {
        let line = CloudFleetLine.note(message: "hello")
        #expect(try CloudFleetLine(jsonLine: Array(line.jsonText.utf8)).jsonText == line.jsonText)
    }
}
