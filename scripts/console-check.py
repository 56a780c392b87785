#!/usr/bin/env python3
"""Drives the ipcemu web console in headless Chromium over the DevTools protocol (stdlib only).

Opens the console, presses the doorbell of the first device, waits for the phone panel to ring,
clicks Accept and waits for the call to be answered; with --video, waits for the device's live
video to play in the phone panel (WebRTC in the browser: its decoded frame count rises over 2 s),
optionally takes a screenshot then, and clicks Hang up. Without --video the screenshot is taken
while the phone rings. Prints one JSON line with what it saw; exits 0 only if everything asked
for was seen.

With --cloud-qr (a device of `ipcemu run --cloud tuya` that is pairing) it only waits for the
console's cloud card to show the pairing QR code (an image the browser decoded) and the pairing URL.

usage: console-check.py CONSOLE_URL [--video] [--cloud-qr] [--screenshot FILE] [--chromium PATH] [--timeout SECONDS]
"""
import argparse, base64, json, os, shutil, socket, struct, subprocess, sys, tempfile, time, urllib.request


class WebSocket:
    """The smallest RFC 6455 client that talks to Chromium: text frames, masked, no extensions."""

    def __init__(self, url, timeout):
        assert url.startswith("ws://")
        hostport, _, path = url[5:].partition("/")
        host, _, port = hostport.partition(":")
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        req = (f"GET /{path} HTTP/1.1\r\nHost: {hostport}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
        self.sock.sendall(req.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise RuntimeError("websocket handshake: connection closed")
            head += chunk
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise RuntimeError("websocket handshake refused: " + head.decode(errors="replace"))

    def send(self, text):
        data = text.encode()
        header = bytes([0x81])
        n = len(data)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _exact(self, n):
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise RuntimeError("websocket closed")
            out += chunk
        return out

    def recv(self):
        message = b""
        while True:
            b0, b1 = self._exact(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._exact(8))[0]
            payload = self._exact(n)
            opcode = b0 & 0x0F
            if opcode == 8:
                raise RuntimeError("websocket closed by peer")
            if opcode in (9, 10):
                continue
            message += payload
            if b0 & 0x80:
                return message.decode()


class Page:
    def __init__(self, ws):
        self.ws, self.next_id = ws, 0

    def call(self, method, **params):
        self.next_id += 1
        my = self.next_id
        self.ws.send(json.dumps({"id": my, "method": method, "params": params}))
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == my:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def eval(self, expression):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        return r.get("result", {}).get("value")

    def wait_for(self, expression, timeout, what):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.eval(expression):
                return True
            time.sleep(0.1)
        raise TimeoutError(f"timed out waiting for {what}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--screenshot")
    ap.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser") or "chromium")
    ap.add_argument("--timeout", type=float, default=20)
    ap.add_argument("--video", action="store_true", help="expect live video after Accept, then hang up")
    ap.add_argument("--cloud-qr", action="store_true", help="expect the cloud card's pairing QR code and URL, nothing else")
    ap.add_argument("--switch", action="store_true",
                    help="with --video: press the HD/SD button, wait for the video's size to change, and back")
    args = ap.parse_args()
    profile = tempfile.mkdtemp(prefix="ipcemu-chromium-")
    browser = subprocess.Popen(
        [args.chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
         "--remote-debugging-port=0",
         "--autoplay-policy=no-user-gesture-required", f"--user-data-dir={profile}", "--window-size=1200,820", args.url],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen = {"rang": False, "answered": False}
    try:
        port_file = os.path.join(profile, "DevToolsActivePort")
        deadline = time.time() + args.timeout
        while not (os.path.exists(port_file) and open(port_file).read().count("\n") >= 1):
            if time.time() > deadline or browser.poll() is not None:
                raise RuntimeError("chromium did not start its DevTools endpoint")
            time.sleep(0.1)
        port = int(open(port_file).read().split("\n")[0])
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5))
        page_target = next(t for t in targets if t.get("type") == "page")
        page = Page(WebSocket(page_target["webSocketDebuggerUrl"], args.timeout))
        if args.cloud_qr:
            page.wait_for("(() => { const i = document.getElementById('cloud-qr'); return !!i && i.complete && i.naturalWidth > 0; })()",
                          args.timeout, "the cloud card's pairing QR code")
            seen.update(page.eval("({ state: document.getElementById('cloud-state').dataset.state,"
                                  " url: document.getElementById('cloud-url').textContent,"
                                  " qrWidth: document.getElementById('cloud-qr').naturalWidth })"))
            if args.screenshot:
                shot = page.call("Page.captureScreenshot", format="png")
                with open(args.screenshot, "wb") as f:
                    f.write(base64.b64decode(shot["data"]))
            print(json.dumps(seen))
            return 0
        page.wait_for("!!document.querySelector('button[data-action=press]') && document.getElementById('live').textContent === 'live'",
                      args.timeout, "the console to load and go live")
        page.wait_for("document.getElementById('phone-state').dataset.phase === 'idle'", args.timeout, "the phone panel to be idle")
        page.eval("document.querySelector('button[data-action=press]').click(); true")
        page.wait_for("document.getElementById('phone-state').dataset.phase === 'ringingIncoming' && "
                      "!document.getElementById('phone-accept').hidden", args.timeout, "the phone panel to ring")
        seen["rang"] = True
        seen["ringText"] = page.eval("document.getElementById('phone-state').textContent")
        if args.screenshot and not args.video:
            time.sleep(0.3)
            shot = page.call("Page.captureScreenshot", format="png")
            with open(args.screenshot, "wb") as f:
                f.write(base64.b64decode(shot["data"]))
        page.eval("document.getElementById('phone-accept').click(); true")
        page.wait_for("document.getElementById('phone-state').dataset.phase === 'answered'", args.timeout, "the call to be answered")
        seen["answered"] = True
        if args.video:
            frames = ("(() => { const v = document.getElementById('phone-video');"
                      " if (!v || v.hidden) return 0;"
                      " return v.getVideoPlaybackQuality ? v.getVideoPlaybackQuality().totalVideoFrames : (v.webkitDecodedFrameCount || 0); })()")
            try:
                page.wait_for(frames + " > 0", args.timeout, "the first decoded video frame")
            finally:
                seen["link"] = page.eval("document.getElementById('phone-video').dataset.link || null")
                seen["note"] = page.eval("document.getElementById('phone-video-note').textContent")
                seen["placeholder"] = page.eval("(() => { const p = document.getElementById('phone-video-placeholder'); return p.hidden ? null : p.textContent; })()")
            first = page.eval(frames)
            time.sleep(2)
            later = page.eval(frames)
            seen["framesFirst"], seen["framesAfter2s"] = first, later
            seen["videoSize"] = page.eval("(() => { const v = document.getElementById('phone-video'); return [v.videoWidth, v.videoHeight]; })()")
            seen["videoPlaying"] = later > first
            page.wait_for("(() => { const n = document.getElementById('phone-video-note').textContent; return n.includes('connected') && n.includes('device: up'); })()",
                          5, "the phone panel to show the P2P link up")
            seen["note"] = page.eval("document.getElementById('phone-video-note').textContent")
            if args.screenshot:
                shot = page.call("Page.captureScreenshot", format="png")
                with open(args.screenshot, "wb") as f:
                    f.write(base64.b64decode(shot["data"]))
            if not seen["videoPlaying"]:
                raise RuntimeError("the video's decoded frame count did not rise")
            if args.switch:
                # HD/SD (PROTOCOL.md 4 resolution): the button sends it; the same track changes size.
                size = "document.getElementById('phone-video').dataset.size || ''"
                sizes, switch_ms = [page.eval(size)], []
                for label in ("SD", "HD"):
                    page.wait_for(f"(() => {{ const b = document.getElementById('phone-stream'); return !b.hidden && b.textContent === '{label}'; }})()",
                                  args.timeout, f"the {label} button")
                    before = sizes[-1]
                    started = time.time()
                    page.eval("document.getElementById('phone-stream').click(); true")
                    page.wait_for(f"({size}) !== '{before}' && ({size}) !== '0x0'", args.timeout, f"the video size to change after {label}")
                    switch_ms.append(round((time.time() - started) * 1000))
                    sizes.append(page.eval(size))
                seen["sizes"], seen["switchMs"] = sizes, switch_ms
                seen["sizeText"] = page.eval("document.getElementById('phone-video-size').textContent")
            page.eval("document.getElementById('phone-hangup').click(); true")
            page.wait_for("document.getElementById('phone-state').dataset.phase === 'idle' && document.getElementById('phone-video').hidden",
                          args.timeout, "the call to end and the video to stop")
            seen["hungUp"] = True
        print(json.dumps(seen))
        return 0
    except Exception as e:  # report what was seen so far
        seen["error"] = str(e)
        print(json.dumps(seen))
        return 1
    finally:
        browser.terminate()
        try:
            browser.wait(timeout=5)
        except subprocess.TimeoutExpired:
            browser.kill()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
