#!/usr/bin/env python3
"""An aiortc peer that plays the app: offers recvonly video + audio to the device (our
WebRTCAnswerer), decodes what arrives and reports on stdout, one JSON object per line.

stdout: {"offer": sdp}, then {"video": n, "width": w, "height": h} as frames decode, and
        {"done": true, ...} at the end (or {"error": text}).
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
    counts = {"video": 0, "audio": 0, "width": 0, "height": 0}
    done = asyncio.Event()

    async def consume(track):
        while True:
            try:
                frame = await track.recv()
            except Exception:
                return
            counts[track.kind] += 1
            if track.kind == "video":
                counts["width"], counts["height"] = frame.width, frame.height
                if counts["video"] % 10 == 0:
                    say({"video": counts["video"], "width": frame.width, "height": frame.height})
                if counts["video"] >= wanted_frames:
                    done.set()

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
