/// One video stream's size and rate: a profile's `main` or `sub` (PROTOCOL.md 4 `stream_type`),
/// what the device encodes and what a simulated link models.
public struct VideoStreamFormat: Sendable, Hashable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public var fps: Int

    public init(width: Int, height: Int, fps: Int) {
        self.width = width
        self.height = height
        self.fps = fps
    }

    public var description: String { "\(width)x\(height)@\(fps)" }
}
