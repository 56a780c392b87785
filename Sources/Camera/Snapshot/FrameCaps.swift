/// How a Frame goes into a GStreamer appsrc: caps, the decoder it needs (if any), and its bytes
/// laid out the way GStreamer's default video info expects (rows padded to 4 bytes).
public enum FrameCaps {
    /// Caps for frames of this format and size.
    public static func caps(format: PixelFormat, width: Int, height: Int, fps: Double = 0) -> String {
        let rate = fps > 0 ? "\(Int((fps * 1000).rounded()))/1000" : "0/1"
        switch format {
        case .i420: return "video/x-raw,format=I420,width=\(width),height=\(height),framerate=\(rate)"
        case .nv12: return "video/x-raw,format=NV12,width=\(width),height=\(height),framerate=\(rate)"
        case .yuyv: return "video/x-raw,format=YUY2,width=\(width),height=\(height),framerate=\(rate)"
        case .mjpeg: return "image/jpeg,width=\(width),height=\(height),framerate=\(rate)"
        case .h264: return "video/x-h264,stream-format=byte-stream,alignment=au,width=\(width),height=\(height),framerate=\(rate)"
        case .h265: return "video/x-h265,stream-format=byte-stream,alignment=au,framerate=\(rate)"
        }
    }

    /// The elements that turn this format into raw video ("" for raw formats), ending in "!".
    public static func decoder(for format: PixelFormat) -> String {
        switch format {
        case .i420, .nv12, .yuyv: return ""
        case .mjpeg: return "jpegdec ! "
        case .h264: return "h264parse ! avdec_h264 ! "
        case .h265: return "h265parse ! avdec_h265 ! "
        }
    }

    /// The frame's bytes with each row padded to GStreamer's stride (a multiple of 4).
    public static func gstreamerBytes(_ frame: Frame) -> [UInt8] {
        func up4(_ v: Int) -> Int { (v + 3) & ~3 }
        let w = frame.width, h = frame.height, cw = (w + 1) / 2, ch = (h + 1) / 2
        let planes: [(rowBytes: Int, rows: Int, stride: Int)]
        switch frame.format {
        case .i420: planes = [(w, h, up4(w)), (cw, ch, up4(cw)), (cw, ch, up4(cw))]
        case .nv12: planes = [(w, h, up4(w)), (2 * cw, ch, up4(2 * cw))]
        case .yuyv: planes = [(2 * w, h, up4(2 * w))]
        case .mjpeg, .h264, .h265: return frame.bytes
        }
        if planes.allSatisfy({ $0.rowBytes == $0.stride }) { return frame.bytes }
        var out = [UInt8]()
        out.reserveCapacity(planes.reduce(0) { $0 + $1.stride * $1.rows })
        var offset = 0
        for plane in planes {
            for _ in 0..<plane.rows {
                let end = min(offset + plane.rowBytes, frame.bytes.count)
                if offset < end { out.append(contentsOf: frame.bytes[offset..<end]) }
                out.append(contentsOf: repeatElement(0, count: plane.stride - max(0, end - offset)))
                offset += plane.rowBytes
            }
        }
        return out
    }
}
