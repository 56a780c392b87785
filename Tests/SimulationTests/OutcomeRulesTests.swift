import CallEngine
import IPCWire
import Testing
@testable import Simulation

/// The pair rules are not vacuous: pairs PROTOCOL.md allows pass, pairs it does not are named.
@Suite struct OutcomeRulesTests {
    func record(_ role: CallRole, _ id: String, _ outcome: CallOutcome, _ by: CallParty, reason: StopReason? = nil,
                sdk: SDKError? = nil, answeredBy: String? = nil, direction: CallDirection = .incoming) -> CallRecord {
        CallRecord(sessionId: "s", role: role, direction: direction, localId: id, peers: [], answeredBy: answeredBy,
                   callType: .oneToOne, startedAt: 0, answeredAt: nil, endedAt: 1, outcome: outcome, endedBy: by,
                   reason: reason, remoteReason: reason?.rawValue, sdkError: sdk)
    }

    @Test func allowedPairsPass() {
        // 3.1.4: the device rejects; the app hears reject (-2510).
        #expect(OutcomeRules.pairProblem(device: record(.device, "d", .rejected, .local, reason: .rejected),
                                         app: record(.app, "u", .rejected, .remote, reason: .rejected, sdk: .rejected),
                                         kind: .appCallsDevice) == nil)
        // 3.3: the device's connect timeout; the app hears stop connect_failed (-2531).
        #expect(OutcomeRules.pairProblem(device: record(.device, "d", .stopped, .local, reason: .connectFailed),
                                         app: record(.app, "u", .stopped, .remote, reason: .connectFailed, sdk: .connectFailed),
                                         kind: .appCallsDevice) == nil)
        // 3.2.3: another target answered; this one hears already_answered (-2522).
        #expect(OutcomeRules.pairProblem(device: record(.device, "d", .hungUp, .remote, answeredBy: "u2"),
                                         app: record(.app, "u", .answeredElsewhere, .remote, sdk: .answeredByOthers),
                                         kind: .deviceCallsApps) == nil)
    }

    @Test func forbiddenPairsAreNamed() {
        // The device rejected, the app says the peer was busy.
        #expect(OutcomeRules.pairProblem(device: record(.device, "d", .rejected, .local, reason: .rejected),
                                         app: record(.app, "u", .busy, .remote, reason: .busy, sdk: .peerBusy),
                                         kind: .appCallsDevice) != nil)
        // Both ended on the other's message in a one-to-one call.
        #expect(OutcomeRules.pairProblem(device: record(.device, "d", .hungUp, .remote),
                                         app: record(.app, "u", .hungUp, .remote, sdk: .peerHungUp),
                                         kind: .appCallsDevice) != nil)
        // "Answered elsewhere" while nobody answered.
        #expect(OutcomeRules.pairProblem(device: record(.device, "d", .notAnswered, .local, reason: .timeout),
                                         app: record(.app, "u", .answeredElsewhere, .remote, sdk: .answeredByOthers),
                                         kind: .doorbell) != nil)
    }

    @Test func sdkErrorsFollowSection35() {
        #expect(OutcomeRules.appViewProblem(record(.app, "u", .busy, .remote, reason: .busy, sdk: .peerBusy)) == nil)
        #expect(OutcomeRules.appViewProblem(record(.app, "u", .busy, .remote, reason: .busy, sdk: .rejected)) != nil)
        #expect(OutcomeRules.appViewProblem(record(.app, "u", .stopped, .local, reason: .heartbeatTimeout, sdk: .disconnect)) == nil)
        #expect(OutcomeRules.appViewProblem(record(.app, "u", .hungUp, .local, sdk: .peerHungUp)) != nil)
        #expect(OutcomeRules.deviceViewProblem(record(.device, "d", .hungUp, .local, sdk: .peerHungUp)) != nil)
    }
}
