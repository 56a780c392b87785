@testable import AppSimulator
import Testing

/// `bench media --app-regular-nomination --app-jitterbuffer-race` (hidden A/B switches): the tuning
/// reaches the options of every link the app makes, with no environment read on the way.
struct AppLinkTuningTests {
    @Test("each tuning reaches the app link's options", arguments: [
        AppLinkTuning(),
        AppLinkTuning(aggressiveNomination: false),
        AppLinkTuning(jitterBufferStartsAfterQueuedEvents: false),
        AppLinkTuning(aggressiveNomination: false, jitterBufferStartsAfterQueuedEvents: false),
    ])
    func tuningReachesTheLink(tuning: AppLinkTuning) throws {
        let made = GStreamerAppLinks(tuning: tuning).makeLink(AppLinkRequest(sessionId: "s1", devId: "d1"))
        defer { made.close() }
        let link = try #require(made as? AppVideoLink)
        #expect(link.tuning == tuning)
    }

    @Test("the defaults are aggressive nomination and the jitter buffer race taken out")
    func defaults() {
        #expect(GStreamerAppLinks().tuning == AppLinkTuning(aggressiveNomination: true, jitterBufferStartsAfterQueuedEvents: true))
    }
}
