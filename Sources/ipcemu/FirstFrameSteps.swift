import AppSimulator
import Foundation

/// Where the time from `answer` to the first decoded frame goes, step by step over many calls
/// (`bench media`): each step's p50/p95 in milliseconds.
struct FirstFrameSteps {
    private var samples: [Step: [Double]] = [:]

    enum Step: String, CaseIterable {
        case answerToLinkOpened = "answer -> app link created"
        case linkOpenedToOffer = "link created -> offer made"
        case answerToOfferSent = "answer -> offer sent"
        case offerToDeviceAnswer = "offer sent -> device's 302 answer"
        case deviceAnswerToConnected = "302 answer -> ICE+DTLS connected"
        case deviceAnswerToCandidate = "  302 answer -> device's 1st candidate"
        case candidateToICE = "  1st candidate -> ICE connected"
        case iceToDTLS = "  ICE connected -> DTLS done (connected)"
        case connectedToFirstCapture = "connected -> first frame captured"
        case captureToFirstDecode = "first frame captured -> decoded"
        case connectedToFirstPacket = "connected -> first video packet"
        case firstPacketToBranchLinked = "first packet -> receive branch linked"
        case branchLinkedToDecoded = "receive branch linked -> decoded"
    }

    /// Adds one call: its link timeline and video stats (the first frame's stamp gives its capture time).
    mutating func add(_ timeline: LinkTimeline, _ stats: VideoStats) {
        guard let first = stats.firstFrameAt, let answerMs = stats.answerToFirstFrameMs else { return }
        let answered = first.addingTimeInterval(-answerMs / 1000)
        func ms(_ a: Date?, _ b: Date?) -> Double? {
            guard let a, let b else { return nil }
            return b.timeIntervalSince(a) * 1000
        }
        let captured = stats.firstFrameCapturedAt
        let steps: [(Step, Double?)] = [
            (.answerToLinkOpened, ms(answered, timeline.opened)),
            (.linkOpenedToOffer, ms(timeline.opened, timeline.offerMade)),
            (.answerToOfferSent, ms(answered, timeline.offerSent)),
            (.offerToDeviceAnswer, ms(timeline.offerSent ?? timeline.offerMade, timeline.answerReceived)),
            (.deviceAnswerToConnected, ms(timeline.answerReceived, timeline.connected)),
            (.deviceAnswerToCandidate, ms(timeline.answerReceived, timeline.firstRemoteCandidate)),
            (.candidateToICE, ms(timeline.firstRemoteCandidate, timeline.iceConnected)),
            (.iceToDTLS, ms(timeline.iceConnected, timeline.connected)),
            (.connectedToFirstCapture, ms(timeline.connected, captured)),
            (.captureToFirstDecode, ms(captured, first)),
            (.connectedToFirstPacket, ms(timeline.connected, timeline.firstVideoPacket)),
            (.firstPacketToBranchLinked, ms(timeline.firstVideoPacket, timeline.receiveBranchLinked)),
            (.branchLinkedToDecoded, ms(timeline.receiveBranchLinked, first)),
        ]
        for case let (step, value?) in steps { samples[step, default: []].append(value) }
    }

    /// One line per step (steps without samples are left out).
    var lines: [String] {
        Step.allCases.compactMap { step in
            guard let values = samples[step], !values.isEmpty else { return nil }
            let p = Percentiles(values)
            let name = step.rawValue.padding(toLength: 40, withPad: " ", startingAt: 0)
            return "    " + name + String(format: " p50 %6.1f ms  p95 %6.1f ms  (n=%d)", p.at(50), p.at(95), values.count)
        }
    }
}
