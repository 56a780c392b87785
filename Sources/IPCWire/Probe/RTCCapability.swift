/// `rtcCapability` (PROTOCOL.md 5): a bit mask of what the device's media can do.
public struct RTCCapability: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let audio = RTCCapability(rawValue: 1)
    public static let video = RTCCapability(rawValue: 2)
    /// A screen that shows the caller.
    public static let twoWay = RTCCapability(rawValue: 4)

    /// `support`: can it take two-way video calls? True exactly when video and two-way are both set.
    public var supportsTwoWayVideoCall: Bool { isSuperset(of: [.video, .twoWay]) }
}
