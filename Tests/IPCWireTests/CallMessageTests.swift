import Testing
@testable import IPCWire

@Suite("308 call events")
struct CallMessageTests {
    @Test func callRoundTrips() throws {
        let msg = CallMessage(event: .call, curId: "u1", targetId: "dev1", sessionId: "s1",
                              timeout: 1_732_200_030_000, callType: .oneToMore,
                              extra: CallExtra(category: "sp_dpsxj"))
        let bytes = msg.envelope(t: 1_732_200_000).encoded()
        let env = try Envelope.decode(bytes)
        #expect(env.protocolNumber == .callSignalling)
        #expect(env.t == 1_732_200_000)
        #expect(try CallMessage.decode(envelopeData: env.data) == msg)
    }

    @Test func numericCallEventIsAccepted() throws {
        let json = #"{"protocol":308,"t":1,"data":{"type":"rtc","data":{"callEvent":3,"curId":"a","targetId":"b","sessionId":"s"}}}"#
        let env = try Envelope.decode(Array(json.utf8))
        #expect(try CallMessage.decode(envelopeData: env.data).event == .hangUp)
    }

    @Test func missingSessionIdIsNamed() throws {
        let json = #"{"protocol":308,"t":1,"data":{"type":"rtc","data":{"event":"ring","curId":"a","targetId":"b"}}}"#
        let env = try Envelope.decode(Array(json.utf8))
        #expect(throws: WireError.missingField("data.data.sessionId")) {
            try CallMessage.decode(envelopeData: env.data)
        }
    }
}
