#!/usr/bin/env python3
"""An aiortc peer that plays the app: offers recvonly video + audio to the device (our
WebRTCAnswerer), decodes what arrives and reports on stdout, one JSON object per line.

stdout: {"offer": sdp}, then {"video": n, "width": w, "height": h} as frames decode, and
        {"done": true, ...} at the end (or {"error": text}). Every decoded frame's stamp
        (PROTOCOL.md 6) is read: "stamps" read, "stampErrors" (no sync pattern), "gaps" (frames
        the counter says were skipped between two decoded frames), "firstFrameMs" (the answer ->
        the first decoded frame) and "firstLatencyMs" (its capture -> decode).
stdin:  {"answer": sdp}, then {"candidate": "a=candidate:..." or "", "sdpMLineIndex": i}.

Two adjustments for a test on one host (DESIGN.md):
- aioice leaves loopback out of its host candidates: here it gathers on 127.0.0.1 only, so that
  every packet stays on loopback;
- aiortc offers only ECDSA DTLS suites and GStreamer 1.22 makes an RSA certificate: the cipher
  list gets ECDHE-RSA-AES128-GCM-SHA256 added.
"""
import asyncio
import json
import sys
import time

import aioice.ice
from aiortc import RTCPeerConnection, RTCSessionDescription
from aiortc.rtcdtlstransport import RTCCertificate
from aiortc.sdp import candidate_from_sdp

aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: ["127.0.0.1"]

_original_context = RTCCertificate._create_ssl_context


def _context_with_rsa_suite(self, srtp_profiles):
    ctx = _original_context(self, srtp_profiles)
    ctx.set_cipher_list(
        b"ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-SHA:"
        b"ECDHE-ECDSA-AES256-SHA:ECDHE-RSA-AES128-GCM-SHA256"
    )
    return ctx


RTCCertificate._create_ssl_context = _context_with_rsa_suite


def read_stamp(frame):
    """PROTOCOL.md 6: (capture unix ms, counter) from row 8 of the luma plane, or None."""
    plane = frame.planes[0]
    data, stride, width = bytes(plane), plane.line_size, frame.width
    if frame.height < 16 or width < 64:
        return None
    bits = []
    for i in range(64):
        column = int((i + 0.5) * width / 64)
        bits.append(1 if data[8 * stride + column] > 128 else 0)
    if bits[0:4] != [1, 0, 1, 0]:
        return None
    value = 0
    for bit in bits[4:52]:
        value = value * 2 + bit
    counter = 0
    for bit in bits[52:64]:
        counter = counter * 2 + bit
    return value, counter


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


async def read_lines(queue):
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            await queue.put(None)
            return
        await queue.put(json.loads(line))


async def main(wanted_frames, timeout):
    pc = RTCPeerConnection()
    pc.addTransceiver("video", direction="recvonly")
    pc.addTransceiver("audio", direction="recvonly")
    counts = {"video": 0, "audio": 0, "width": 0, "height": 0, "stamps": 0, "stampErrors": 0, "gaps": 0}
    done = asyncio.Event()
    answered = {"at": None}
    last_counter = {"value": None}

    async def consume(track):
        while True:
            try:
                frame = await track.recv()
            except Exception:
                return
            counts[track.kind] += 1
            # Done once both kinds came: the video's frames and at least one audio frame (on a
            # loaded machine the audio's first packet can come after the video's 60th frame).
            if counts["video"] >= wanted_frames and counts["audio"] > 0:
                done.set()
            if track.kind == "video":
                now_ms = time.time() * 1000
                counts["width"], counts["height"] = frame.width, frame.height
                stamp = read_stamp(frame)
                if stamp is None:
                    counts["stampErrors"] += 1
                else:
                    captured_ms, counter = stamp
                    counts["stamps"] += 1
                    if counts["stamps"] == 1:
                        counts["firstLatencyMs"] = round(now_ms - captured_ms, 1)
                    if last_counter["value"] is not None:
                        skipped = (counter - last_counter["value"] - 1) % 4096
                        if skipped:
                            counts["gaps"] += skipped
                            counts.setdefault("gapsAt", []).append([counts["stamps"], skipped])
                    last_counter["value"] = counter
                if counts["video"] == 1 and answered["at"] is not None:
                    counts["firstFrameMs"] = round((time.monotonic() - answered["at"]) * 1000, 1)
                if counts["video"] % 10 == 0:
                    say({"video": counts["video"], "width": frame.width, "height": frame.height})

    @pc.on("track")
    def on_track(track):
        asyncio.ensure_future(consume(track))

    await pc.setLocalDescription(await pc.createOffer())
    say({"offer": pc.localDescription.sdp})

    queue = asyncio.Queue()
    asyncio.ensure_future(read_lines(queue))

    async def signalling():
        while True:
            message = await queue.get()
            if message is None:
                return
            if "answer" in message:
                answered["at"] = time.monotonic()
                await pc.setRemoteDescription(RTCSessionDescription(sdp=message["answer"], type="answer"))
            elif "candidate" in message:
                line = message["candidate"].strip()
                if line.startswith("a="):
                    line = line[2:]
                if not line:
                    continue
                if line.startswith("candidate:"):
                    line = line[len("candidate:"):]
                candidate = candidate_from_sdp(line)
                candidate.sdpMLineIndex = message.get("sdpMLineIndex", 0)
                await pc.addIceCandidate(candidate)

    asyncio.ensure_future(signalling())
    try:
        await asyncio.wait_for(done.wait(), timeout)
        say({"done": True, **counts, "state": pc.connectionState})
    except asyncio.TimeoutError:
        say({"done": False, **counts, "state": pc.connectionState})
    await pc.close()


if __name__ == "__main__":
    frames = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 30
    try:
        asyncio.run(main(frames, seconds))
    except Exception as error:  # reported to the test, which fails on it
        say({"error": repr(error)})
        sys.exit(1)
