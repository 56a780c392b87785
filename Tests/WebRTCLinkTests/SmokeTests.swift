import Foundation
import Testing
@testable import WebRTCLink

@Test func oneWayVideoArrives() async throws {
    let harness = LinkHarness()
    defer { harness.closeAll() }
    let offer = try await harness.startOfferer()
    try await harness.startAnswerer(offer: offer, media: SendMedia(video: VideoFormat(width: 320, height: 240, fps: 30)))
    print("ANSWER:\n\(harness.answer ?? "-")")
    for _ in 0..<2 {
        try await Task.sleep(for: .seconds(1))
        print("answerer transport \(harness.answerer!.stats.transportPacketsReceived) offerer frames \(harness.framesReceivedByOfferer)")
    }
    harness.offerer!.close()
    for _ in 0..<2 {
        try await Task.sleep(for: .seconds(1))
        print("answerer transport \(harness.answerer!.stats.transportPacketsReceived) states \(harness.answererStates)")
    }
}
