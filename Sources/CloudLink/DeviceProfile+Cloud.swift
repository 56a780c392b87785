import DeviceProfile
import IPCWire
import TuyaCloud

extension DeviceProfile {
    /// This profile as the device that activation made (PROTOCOL.md 9.3, 9.4): the devId and
    /// localKey the cloud issued, pv2.2 payloads (the cloud's), the topics the cloud's ACL allows
    /// (the defaults of PROTOCOL.md 1, whatever the profile said), and the device link's credentials
    /// (client id = username = devId, password from the secKey). The profile's `productId` becomes the
    /// product key it was activated for. Everything else (capabilities, camera, answer policy,
    /// timers) stays the profile's.
    ///
    /// Hooks left for later work: DP reports matched to `identity.dataPoints` (issue 21 item 3), and
    /// pv2.2 `from` in the SDK's byte order (`PayloadSealer.pv22FromByteOrder`) once `Device` takes it.
    public func onCloud(_ identity: CloudDeviceIdentity, productKey: String) -> DeviceProfile {
        var profile = self
        profile.identity.devId = identity.devId
        profile.identity.localKey = identity.localKey
        profile.identity.productId = productKey
        if profile.identity.name == identity.devId || profile.identity.name.isEmpty {
            profile.identity.name = identity.devId
        }
        profile.security = .pv22
        profile.topics = TopicTemplates()
        profile.broker.username = identity.credentials.username
        profile.broker.password = identity.credentials.password
        profile.broker.keepAlive = 120
        return profile
    }
}
