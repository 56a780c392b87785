import ArgumentParser
import Camera
import DeviceProfile
import Emulator
import Foundation

/// What `ipcemu run` checks before its device goes online, beyond what binding the control
/// address and opening the journal already prove.
enum StartupChecks {
    /// The profile's camera can be had: a clip file is read and parsed, a V4L2 node opens, a V4L2
    /// camera named by its card is present. The test pattern is drawn in memory (nothing to check).
    static func camera(of profile: DeviceProfile) throws {
        let config = CameraConfig(profile: profile)
        switch config.kind {
        case .testPattern:
            return
        case .clip:
            do { _ = try config.makeSource() } catch {
                throw ValidationError("camera \(config.kind): \(error)")
            }
        case .v4l2(.path(let path)):
            let fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else {
                throw ValidationError("camera \(path) cannot be opened: \(String(cString: strerror(errno)))")
            }
            close(fd)
        case .v4l2(.name(let name)):
            let cards = V4L2Inventory.scan().filter(\.isCapture).compactMap { $0.capabilities?.card }
            guard cards.contains(where: { $0 == name || $0.localizedCaseInsensitiveContains(name) }) else {
                throw ValidationError("camera \"\(name)\" not found among the capture devices (\(cards.isEmpty ? "none" : cards.joined(separator: ", ")))")
            }
        }
    }
}
