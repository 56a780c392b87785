// Media through the core: receive branches for what the peer sends (decoded, counted, or handed to
// the device's screen and sound), key frame requests both ways, snapshots, and pushing our own
// video into the "videoin" appsrc.
import CGstWebRTC

extension PeerCore {
    // MARK: Receiving

    func padAdded(pad: OpaquePointer, media: String, encoding: String) {
        guard let pipeline = livePipeline() else { return }
        if media == "video" { events.videoReceiveStep?(.firstPacket) }
        defer { if media == "video" { events.videoReceiveStep?(.branchLinked) } }
        let counter: cgw_buffers_fn = media == "video" ? onVideoPackets : media == "audio" ? onAudioPackets : onOtherPackets
        // The first H.264 video: the branch built before the first packet (issue 24 item 6).
        if media == "video", encoding.uppercased() == "H264",
           let prebuilt = fields.withLock({ f -> OpaquePointer? in
               defer { f.prebuiltVideoBranch = nil }
               return f.prebuiltVideoBranch
           })
        {
            _ = cgw_pad_count_buffers(pad, counter, CoreReference.retained(self), releaseCoreReference)
            keepReceivedVideoPad(pad)
            var error: UnsafeMutablePointer<CChar>?
            if !cgw_link_pad_to_added_bin(pad, prebuilt, &error) {
                fail(.pipelineError("linking the prebuilt video receive branch: \(takeCString(error))"))
            }
            return
        }
        let bin: OpaquePointer
        switch makeReceiveBin(media: media, encoding: encoding) {
        case .success(let made): bin = made
        case .failure(let problem): return fail(.pipelineError(problem.text))
        }
        _ = cgw_pad_count_buffers(pad, counter, CoreReference.retained(self), releaseCoreReference)
        if media == "video" { keepReceivedVideoPad(pad) }
        var error: UnsafeMutablePointer<CChar>?
        if !cgw_link_pad_to_bin(pipeline, pad, bin, &error) {
            fail(.pipelineError("linking the \(media) receive branch: \(takeCString(error))"))
        }
    }

    /// Whether this core builds its H.264 video receive branch before the first packet: received
    /// video is decoded or counted with no output of the device's (the app simulator's case).
    var prebuildsVideoReceiveBranch: Bool {
        preparesVideoReceive && !OutputDescriptions.showsVideo(encoding: "H264", devices: devices)
    }

    /// Builds the H.264 receive branch and adds it to the pipeline before it plays, so the first
    /// packet only links it (building it at pad-added cost the first frame a few ms).
    func prebuildVideoReceiveBranch(pipeline: OpaquePointer) throws(WebRTCLinkError) {
        guard prebuildsVideoReceiveBranch else { return }
        let bin: OpaquePointer
        switch makeReceiveBin(media: "video", encoding: "H264") {
        case .success(let made): bin = made
        case .failure(let problem): throw .pipeline(problem.text)
        }
        guard cgw_pipeline_add_bin(pipeline, bin) else {
            throw .pipeline("could not add the video receive branch to the pipeline")
        }
        let binRef = GstRef(bin)
        fields.withLock { $0.prebuiltVideoBranch = binRef.pointer }
    }

    private func keepReceivedVideoPad(_ pad: OpaquePointer) {
        let padRef = GstRef(pad)
        fields.withLock { f in
            if f.receivedVideoPad == nil {
                f.receivedVideoPad = padRef.pointer
                _ = cgw_object_ref(UnsafeMutableRawPointer(pad))
            }
        }
    }

    /// A receive branch for `media`/`encoding` with its callbacks set, kept in `receiveBins`.
    private func makeReceiveBin(media: String, encoding: String) -> Result<OpaquePointer, ReceiveBranchProblem> {
        // A counted link (`decodesVideo` false: many streams on one machine) counts its H.264 at the
        // RTP level and drops its audio (its packets are counted at the pad): no queue, no thread.
        let countOnly = !decodesVideo && (media == "audio" || media == "video" && encoding.uppercased() == "H264")
        let report = events.outputProblem
        let outputs = countOnly ? nil : OutputDescriptions.receiveBranch(
            media: media, encoding: encoding, devices: devices, windowEnded: { report?($0) })
        for problem in outputs?.problems ?? [] { events.outputProblem?(problem) }
        if let window = outputs?.window { fields.withLock { $0.windows.append(window) } }
        let description = countOnly
            ? (media == "video" ? PipelineDescriptions.countingH264Branch : PipelineDescriptions.discardBranch)
            : outputs?.description
            ?? PipelineDescriptions.receiveBranch(media: media, encoding: encoding) ?? PipelineDescriptions.discardBranch
        var error: UnsafeMutablePointer<CChar>?
        guard let bin = cgw_bin_new_from_description(description, &error) else {
            outputs?.window?.finish()
            return .failure(ReceiveBranchProblem(text: "receive branch for \(media)/\(encoding): \(takeCString(error))"))
        }
        for (element, property, value) in outputs?.properties ?? [] {
            if let child = cgw_bin_get_child(bin, element) {
                _ = cgw_object_set_string(UnsafeMutableRawPointer(child), property, value)
                cgw_element_unref(child)
            }
        }
        if let volume = cgw_bin_get_child(bin, OutputDescriptions.playbackVolume) {
            _ = cgw_object_set_bool(UnsafeMutableRawPointer(volume), "mute", !fields.withLock { $0.speakerOn })
            cgw_element_unref(volume)
        }
        let binRef = GstRef(bin)
        for entry in outputs?.entries ?? [] where cgw_output_guard(bin, entry) {
            fields.withLock { $0.outputBranches.append((binRef.pointer, entry)) }
        }
        if let sink = cgw_bin_get_child(bin, "frames") {
            _ = cgw_appsink_on_video_frame(sink, onVideoFrame, CoreReference.retained(self), releaseCoreReference)
            cgw_element_unref(sink)
        }
        if let sink = cgw_bin_get_child(bin, PipelineDescriptions.countedUnitsSink) {
            _ = cgw_sink_count_rtp_access_units(sink, onCountedAccessUnit, CoreReference.retained(self), releaseCoreReference)
            cgw_element_unref(sink)
        }
        if let sink = cgw_bin_get_child(bin, "sound") {
            _ = cgw_appsink_on_sample(sink, onAudioSample, CoreReference.retained(self), releaseCoreReference)
            cgw_element_unref(sink)
        }
        fields.withLock { $0.receiveBins.append(binRef.pointer) }
        return .success(bin)
    }

    func videoFrame(
        sample: OpaquePointer?, luma: UnsafePointer<UInt8>?, width: Int32, height: Int32, stride: Int32,
        pts: Int64, arrival: Int64
    ) {
        let newSample = cgw_sample_ref(sample).map(GstRef.init)
        let old: OpaquePointer? = fields.withLock { f in
            f.statistics.videoFramesReceived += 1
            f.statistics.receivedVideoWidth = Int(width)
            f.statistics.receivedVideoHeight = Int(height)
            defer { f.latestSample = newSample?.pointer }
            return f.latestSample
        }
        if let old { cgw_sample_unref(old) }
        guard let handler = events.videoFrame, let luma, width > 0, height > 0, stride >= width else { return }
        let bytes = Array(UnsafeBufferPointer(start: luma, count: Int(stride) * Int(height)))
        handler(DecodedVideoFrame(
            luma: bytes, width: Int(width), height: Int(height), stride: Int(stride), arrivalUnixNanos: arrival,
            ptsNanos: pts))
    }

    // MARK: Key frames and snapshots

    /// Asks the peer for a key frame (RTCP PLI/FIR) on the received video. False before video arrives.
    func requestKeyFrame() -> Bool {
        guard let pad = fields.withLock({ $0.phase == .closed ? nil : $0.receivedVideoPad }) else { return false }
        return cgw_pad_request_key_unit_upstream(pad)
    }

    /// The latest decoded video frame from the peer, as JPEG.
    func snapshotJPEG() throws(WebRTCLinkError) -> [UInt8] {
        guard let sample = fields.withLock({ cgw_sample_ref($0.latestSample) }) else {
            throw .snapshotUnavailable("no video frame received yet")
        }
        defer { cgw_sample_unref(sample) }
        var bytes: UnsafeMutablePointer<UInt8>?
        var length = 0
        var error: UnsafeMutablePointer<CChar>?
        guard cgw_sample_encode_jpeg(sample, &bytes, &length, &error), let bytes else {
            throw .snapshotUnavailable(takeCString(error))
        }
        defer { cgw_free(bytes) }
        return Array(UnsafeBufferPointer(start: bytes, count: length))
    }

    // MARK: Sending from appsrc or the pushed pad

    /// Pushes one buffer into the "videoin" appsrc, or its RTP packets (`packets`, or the link's
    /// own) through the pushed pad on this thread (`PeerCore+PushedVideo.swift`). The caller's PTS (any clock) is mapped onto the pipeline's
    /// running time, keeping its spacing; nil or a jump of more than a second re-anchors.
    func pushVideoBuffer(_ bytes: UnsafeRawBufferPointer, ptsNanos: Int64?, keyFrame: Bool, packets: RTPPackets? = nil) -> Bool {
        if fields.withLock({ $0.videoPad != nil }) {
            return pushThroughPad(bytes, ptsNanos: ptsNanos, keyFrame: keyFrame, packets: packets)
        }
        guard let (appsrc, pipeline) = fields.withLock({ f -> (OpaquePointer, OpaquePointer)? in
            guard f.phase != .closed, let videoIn = f.videoIn, let pipeline = f.pipeline else { return nil }
            return (videoIn, pipeline)
        }) else { return false }
        let (pts, duration) = nextPresentationTime(pipeline: pipeline, ptsNanos: ptsNanos)
        return cgw_appsrc_push(appsrc, bytes.baseAddress, bytes.count, pts, duration, !keyFrame)
    }

    /// The running time to stamp the next video buffer with, and its duration.
    func nextPresentationTime(pipeline: OpaquePointer, ptsNanos: Int64?) -> (pts: Int64, duration: Int64) {
        let running = cgw_element_running_time_ns(pipeline)
        return fields.withLock { f in
            guard running >= 0 else { return (-1, f.frameDurationNanos) }
            var mapped = running
            if let ptsNanos {
                if let offset = f.ptsOffset, abs(ptsNanos + offset - running) < 1_000_000_000 {
                    mapped = ptsNanos + offset
                } else {
                    f.ptsOffset = running - ptsNanos
                }
            }
            if mapped <= f.lastPushedPts { mapped = f.lastPushedPts + 1 }
            f.lastPushedPts = mapped
            return (mapped, f.frameDurationNanos)
        }
    }

    /// Pushes one buffer of the shared tone through the pushed audio pad, on this thread, stamped
    /// with the pipeline's running time.
    func pushAudioBuffer(_ bytes: UnsafeRawBufferPointer) {
        guard let (pad, pipeline) = fields.withLock({ f -> (OpaquePointer, OpaquePointer)? in
            // Only once connected, as for the pushed video.
            guard f.phase != .closed, f.state == .connected, let pad = f.audioPad, let pipeline = f.pipeline else { return nil }
            return (pad, pipeline)
        }) else { return }
        // PCMA: one byte per sample at 8 kHz.
        let duration = Int64(bytes.count) * 125_000
        _ = cgw_pusher_push(pad, bytes.baseAddress, bytes.count, cgw_element_running_time_ns(pipeline), duration, false)
    }

    // MARK: Speaker (PROTOCOL.md 8.6)

    /// Plays the peer's audio on the speaker (true) or mutes it (false), now and for audio branches
    /// that come later.
    func setSpeaker(on: Bool) {
        let bins = fields.withLock { f -> [OpaquePointer] in
            f.speakerOn = on
            return f.receiveBins
        }
        for bin in bins {
            guard let volume = cgw_bin_get_child(bin, OutputDescriptions.playbackVolume) else { continue }
            _ = cgw_object_set_bool(UnsafeMutableRawPointer(volume), "mute", !on)
            cgw_element_unref(volume)
        }
    }

    /// Whether the peer's audio plays on the speaker.
    var isSpeakerOn: Bool { fields.withLock { $0.speakerOn } }
}

/// Why a receive branch could not be built (gst-launch's parse error).
struct ReceiveBranchProblem: Error {
    var text: String
}
