import Camera
import DeviceProfile
import IPCWire

extension CameraConfig {
    /// The camera of a device profile, at the size and rate of one of its streams (PROTOCOL.md 4:
    /// `stream_type` 0 main, 1 sub). A V4L2 camera or a clip keeps its own capture settings; the
    /// test pattern is drawn at exactly the stream's size and rate.
    public init(profile: DeviceProfile, stream: StreamType = .main) {
        let video = profile.capabilities.video
        let format = (stream == .sub ? video?.sub : video?.main) ?? DeviceProfile.StreamFormat.defaultMain
        switch profile.camera {
        case .testPattern:
            self.init(kind: .testPattern, width: format.width, height: format.height, fps: Double(format.fps))
        case .v4l2(let cam):
            let device: V4L2Source.Device = cam.isPath ? .path(cam.device) : .name(cam.device)
            let preferred: PixelFormat? = switch cam.format {
            case .mjpeg: .mjpeg
            case .yuyv: .yuyv
            case .h264: .h264
            case .h265: .h265
            case .auto: nil
            }
            self.init(kind: .v4l2(device), width: cam.width, height: cam.height, fps: Double(cam.fps),
                      preferredFormat: preferred)
        case .clip(let clip):
            self.init(kind: .clip(path: clip.path), width: format.width, height: format.height, fps: Double(clip.fps))
        }
    }
}
