// gst-launch descriptions of the send and receive branches, one function per branch.
// The element named "webrtc" is the webrtcbin; "videoin" is the appsrc the caller feeds;
// "videoencoded" is the last element before the video payloader (its src pad is probed to count
// frames and key frames sent); a link fed pushed access units has none: the RTP packets of its
// feed's one payloader enter webrtcbin by a pad of ours, in place of the stand-in "videopay".

enum PipelineDescriptions {
    static func webrtcbin(options: LinkOptions) -> String {
        "webrtcbin name=webrtc bundle-policy=max-bundle latency=\(max(0, options.jitterBufferMs))"
    }

    /// Name of the H.264 encoder element for a choice, on this machine.
    static func encoderFactory(for choice: H264EncoderChoice, hardwareAvailable: Bool) -> String {
        switch choice {
        case .software: return "x264enc"
        case .hardware: return "v4l2h264enc"
        case .automatic: return hardwareAvailable ? "v4l2h264enc" : "x264enc"
        }
    }

    static func defaultBitrateKbps(_ video: VideoFormat) -> Int {
        // About 0.07 bit per pixel per frame: 1280x720@30 -> ~1.9 Mbit/s; at least 256 kbit/s.
        max(256, video.width * video.height * max(1, video.fps) * 7 / 100 / 1000)
    }

    static func rawCaps(_ video: VideoFormat) -> String {
        "video/x-raw,format=I420,width=\(video.width),height=\(video.height),framerate=\(video.fps)/1"
    }

    /// Encoder for raw I420 input: constrained baseline, no B-frames, key frame every 2 s and on
    /// every force-key-unit event (which rtph264pay passes up when webrtcbin gets a PLI/FIR).
    static func encoder(factory: String, video: VideoFormat, bitrateKbps: Int, keyFrameIntervalSeconds: Int) -> String {
        let keyInterval = max(1, video.fps * max(1, keyFrameIntervalSeconds))
        switch factory {
        case "v4l2h264enc":
            return "v4l2h264enc extra-controls=\"controls,repeat_sequence_header=1,h264_i_frame_period=\(keyInterval),"
                + "video_bitrate=\(bitrateKbps * 1000)\" ! video/x-h264,profile=constrained-baseline,level=(string)4"
                + " ! h264parse name=videoencoded config-interval=-1"
        default:
            return "x264enc name=videoencoded tune=zerolatency speed-preset=ultrafast key-int-max=\(keyInterval)"
                + " bframes=0 b-adapt=false bitrate=\(bitrateKbps) ! video/x-h264,profile=constrained-baseline"
        }
    }

    /// The whole video send branch, ending in webrtcbin's next sink pad.
    static func videoSend(media: SendMedia, payloadType: Int, encoderFactory: String) -> String {
        let video = media.video
        let bitrate = media.videoBitrateKbps ?? defaultBitrateKbps(video)
        let encode = encoder(
            factory: encoderFactory, video: video, bitrateKbps: bitrate, keyFrameIntervalSeconds: media.keyFrameIntervalSeconds)
        let source: String
        switch media.videoInput {
        case .testPattern:
            source = "videotestsrc is-live=true pattern=ball ! \(rawCaps(video)) ! queue max-size-buffers=2"
                + " ! \(encode)"
        case .rawFrames:
            source = "appsrc name=videoin is-live=true format=time do-timestamp=false max-buffers=4 max-bytes=0"
                + " leaky-type=upstream caps=\"\(rawCaps(video))\" ! queue max-size-buffers=2"
                + " ! \(encode)"
        case .capturedFrames(let format, let width, let height):
            let decode = format == .mjpeg ? "jpegdec ! " : ""
            source = "appsrc name=videoin is-live=true format=time do-timestamp=false max-buffers=4 max-bytes=0"
                + " leaky-type=upstream caps=\"\(format.caps(width: width, height: height, fps: video.fps))\""
                + " ! \(decode)videoconvert ! videoscale ! \(rawCaps(video)) ! queue max-size-buffers=2"
                + " ! \(encode)"
        case .h264AccessUnits:
            // No appsrc, parser or payloader: the caller pushes the RTP packets of its feed's one
            // payloader (`RTPPackets`), each link its own copies, straight into webrtcbin's sink
            // pad. The capsfilter only holds that pad's place in the description (webrtcbin's
            // sink pads are requested in order); `cgw_rtp_pusher_attach` takes it out and links
            // the pushed pad there. H.264 without a size: the stream may change size at a key
            // frame (PROTOCOL.md 4 `resolution`).
            return "capsfilter name=\(pushedVideoElement) caps=\"\(pushedRTPCaps(payloadType: payloadType))\" ! webrtc."
        }
        return source + " ! " + videoPayloader(payloadType: payloadType) + " ! webrtc."
    }

    /// Caps of the RTP packets pushed into webrtcbin (`.h264AccessUnits`; the link's SSRC is added).
    static func pushedRTPCaps(payloadType: Int) -> String {
        "application/x-rtp,media=video,encoding-name=H264,payload=\(payloadType),clock-rate=90000"
    }

    /// Raw frames the shared encoder's appsrc holds before it drops a new one (then 2 more wait in
    /// the queue before the encoder): 8 frames, 267 ms at 30 fps, for an encoder that starts or
    /// is not scheduled for a moment. Its `max-bytes` is 0 (no limit but this): appsrc's default
    /// of 200,000 bytes is less than one 720p I420 frame (1,382,400), so with it the appsrc held a
    /// single frame and dropped the next one whenever its thread had not yet taken the last (the
    /// frames missing from every sampled stream of issue 24 item 5's decoded sample under load).
    static let sharedEncoderQueuedFrames = 6

    /// A shared encoder (issue 11): frames in through "videoin", access units out of the appsink
    /// "encoded" (byte-stream, one access unit per buffer, SPS/PPS before every IDR).
    static func sharedEncoder(
        video: VideoFormat, input: SharedH264Encoder.Input, encoderFactory: String, bitrateKbps: Int,
        keyFrameIntervalSeconds: Int
    ) -> String {
        let encode = encoder(
            factory: encoderFactory, video: video, bitrateKbps: bitrateKbps, keyFrameIntervalSeconds: keyFrameIntervalSeconds)
        let source: String
        switch input {
        case .i420:
            source = "appsrc name=videoin is-live=true format=time do-timestamp=true max-buffers=\(sharedEncoderQueuedFrames) max-bytes=0"
                + " leaky-type=upstream caps=\"\(rawCaps(video))\" ! queue max-size-buffers=2"
        case .captured(let format, let width, let height):
            let decode = format == .mjpeg ? "jpegdec ! " : ""
            source = "appsrc name=videoin is-live=true format=time do-timestamp=true max-buffers=\(sharedEncoderQueuedFrames) max-bytes=0"
                + " leaky-type=upstream caps=\"\(format.caps(width: width, height: height, fps: video.fps))\""
                + " ! \(decode)videoconvert ! videoscale ! \(rawCaps(video)) ! queue max-size-buffers=2"
        }
        if encoderFactory == "x265enc" {
            // PROTOCOL.md 7: H.265 for the fmp4Stream data channel; VPS/SPS/PPS before every key
            // frame (the fMP4 writer builds its hvcC from them).
            let keyInterval = max(1, video.fps * max(1, keyFrameIntervalSeconds))
            return source + " ! x265enc name=videoencoded tune=zerolatency speed-preset=ultrafast"
                + " key-int-max=\(keyInterval) bitrate=\(bitrateKbps) option-string=\"repeat-headers=1:bframes=0\""
                + " ! h265parse config-interval=-1 ! video/x-h265,stream-format=byte-stream,alignment=au"
                + " ! appsink name=encoded sync=false async=false max-buffers=8 drop=false"
        }
        let parse = encoderFactory == "v4l2h264enc" ? "" : " ! h264parse config-interval=-1"
        return source + " ! " + encode + parse
            + " ! video/x-h264,stream-format=byte-stream,alignment=au"
            + " ! appsink name=encoded sync=false async=false max-buffers=8 drop=false"
    }

    /// The stand-in whose place at webrtcbin's sink pad a link's pushed RTP packets take
    /// (`.h264AccessUnits`).
    static let pushedVideoElement = "videopay"

    static func videoPayloader(payloadType: Int, name: String? = nil) -> String {
        "rtph264pay\(name.map { " name=\($0)" } ?? "") config-interval=-1 aggregate-mode=zero-latency pt=\(payloadType)"
            + " ! application/x-rtp,media=video,encoding-name=H264,payload=\(payloadType),clock-rate=90000"
    }

    /// A 440 Hz tone (or `source`, a microphone), PCMA at 8 kHz or Opus, ending in webrtcbin's
    /// next sink pad. The tone already comes out at the codec's rate (audioconvert and
    /// audioresample pass it through) in 1024-sample buffers: 7.8 packets/s at 8 kHz. Every packet
    /// costs a link about as much as a video frame (issue 24 item 5: 40 ms buffers tripled the
    /// audio threads' CPU), so the tone stays in large buffers.
    static func audioSend(codec: AudioCodec, payloadType: Int, source: String? = nil) -> String {
        let tone = (source ?? "audiotestsrc is-live=true wave=sine freq=440 volume=0.2") + " ! audioconvert ! audioresample"
        switch codec {
        case .pcma:
            return tone + " ! audio/x-raw,rate=8000,channels=1 ! alawenc ! rtppcmapay pt=\(payloadType)"
                + " ! application/x-rtp,media=audio,encoding-name=PCMA,payload=\(payloadType),clock-rate=8000 ! webrtc."
        case .opus:
            return tone + " ! audio/x-raw,rate=48000 ! opusenc ! rtpopuspay pt=\(payloadType)"
                + " ! application/x-rtp,media=audio,encoding-name=OPUS,payload=\(payloadType),clock-rate=48000"
                + " ! webrtc."
        }
    }

    /// PCMA from the process's shared tone (`SharedAudioTone`), pushed into "audiopay", ending
    /// in webrtcbin's next sink pad.
    static func sharedToneSend(payloadType: Int) -> String {
        "rtppcmapay name=audiopay pt=\(payloadType)"
            + " ! application/x-rtp,media=audio,encoding-name=PCMA,payload=\(payloadType),clock-rate=8000 ! webrtc."
    }

    /// Receive branch for a webrtcbin src pad; nil when the encoding is not one we decode (it is
    /// then counted and dropped).
    static func receiveBranch(media: String, encoding: String) -> String? {
        switch (media, encoding.uppercased()) {
        case ("video", "H264"):
            return "queue max-size-buffers=0 max-size-time=0 max-size-bytes=0 ! rtph264depay request-keyframe=true"
                + " ! h264parse ! avdec_h264 max-threads=1 ! videoconvert ! video/x-raw,format=I420"
                + " ! appsink name=frames sync=false async=false max-buffers=2 drop=true"
        case ("video", "VP8"):
            return "queue ! rtpvp8depay ! vp8dec ! videoconvert ! video/x-raw,format=I420"
                + " ! appsink name=frames sync=false async=false max-buffers=2 drop=true"
        case ("audio", "PCMA"):
            return "queue ! rtppcmadepay ! alawdec ! appsink name=sound sync=false async=false max-buffers=4 drop=true"
        case ("audio", "PCMU"):
            return "queue ! rtppcmudepay ! mulawdec ! appsink name=sound sync=false async=false max-buffers=4 drop=true"
        case ("audio", "OPUS"):
            return "queue ! rtpopusdepay ! opusdec ! appsink name=sound sync=false async=false max-buffers=4 drop=true"
        default:
            return nil
        }
    }

    static let discardBranch = "fakesink sync=false async=false"

    /// Received H.264 counted, not decoded: a sink whose pad counts access units at the RTP level
    /// (`cgw_sink_count_rtp_access_units`: the marker bit ends one, an IDR slice makes it a key frame).
    /// No queue (its thread and a hand-off per packet), no depayloader: what 200 receiving links on
    /// two cores can afford (issue 24 item 5).
    static let countingH264Branch = "fakesink name=\(countedUnitsSink) sync=false async=false enable-last-sample=false"

    /// The element of `countingH264Branch` whose sink pad counts.
    static let countedUnitsSink = "rtpunits"

    /// Caps of a receive-only transceiver the offerer (app simulator) adds.
    static func offerVideoCaps(payloadType: Int, statingProfile: Bool) -> String {
        "application/x-rtp,media=video,encoding-name=H264,payload=\(payloadType),clock-rate=90000,"
            + "packetization-mode=(string)1,level-asymmetry-allowed=(string)1"
            + (statingProfile ? ",profile-level-id=(string)42e01f" : "")
    }

    static func offerAudioCaps(_ codecs: [AudioCodec]) -> String {
        codecs.map { codec in
            switch codec {
            case .pcma: return "application/x-rtp,media=audio,encoding-name=PCMA,payload=8,clock-rate=8000"
            case .opus:
                return "application/x-rtp,media=audio,encoding-name=OPUS,payload=111,clock-rate=48000,"
                    + "encoding-params=(string)2"
            }
        }.joined(separator: ";")
    }
}
