"""The stand-in's control endpoint (plain HTTP on loopback): what the phone app and the cloud's
back office would cause.

- `POST /standin/bind {"uuid":U[,"region":"EU","env":"pro","ttl":600,"seal":"authkey"|"wrongKey"|"plain"]}`:
  as the app scanning the QR code: waits (up to `wait` s, default 15) until `acon_U` listens on
  d/ai/U, issues a token and publishes protocol 46 `{"token","region","env"}` there, sealed pv2.2
  with authkey[0..15] (src/mqtt_bind.c). `ttl` 0 issues an already expired token; `seal` other than
  authkey sends it in the wrong encryption (tests). Answers `{"token","region","env","expiresAt"}`,
  409 when the device never listened.
- `POST /standin/unbind {"uuid":U}`: the device is removed from its home: its device-link account
  goes (mosquitto reloads and drops it; its next CONNECT gets CONNACK 5) and info.sync says "reset".
- `GET /standin/state`: devices (devId, uuid, bound, and the localKey the cloud gives the phone
  app), and refusal counts, as JSON.
"""
import http.server
import json
import random
import threading
import time

from . import tuyacrypto


def make_control(cloud, port):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            pass

        def _answer(self, status, obj):
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _body(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(min(length, 65536)) if length else b"{}"
            value = json.loads(raw or b"{}")
            if not isinstance(value, dict):
                raise ValueError("expected a JSON object")
            return value

        def do_GET(self):
            if self.path == "/standin/state":
                self._answer(200, cloud.state())
            else:
                self._answer(404, {"error": f"no such path {self.path}"})

        def do_POST(self):
            try:
                body = self._body()
            except ValueError as error:
                self._answer(400, {"error": f"body: {error}"})
                return
            try:
                if self.path == "/standin/bind":
                    status, answer = cloud.bind(body)
                elif self.path == "/standin/unbind":
                    status, answer = cloud.unbind(body)
                else:
                    status, answer = 404, {"error": f"no such path {self.path}"}
            except (TypeError, ValueError) as error:
                status, answer = 400, {"error": f"body: {error}"}
            self._answer(status, answer)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="control", daemon=True).start()
    return server


def token_payload(token, authkey, seal):
    """Protocol 46 as the cloud pushes it on d/ai/<uuid>."""
    text = json.dumps({"protocol": 46, "t": int(time.time()),
                       "data": {"token": token.value, "region": token.region, "env": token.env}},
                      separators=(",", ":"))
    if seal == "plain":
        return text.encode()
    key = authkey if seal == "authkey" else "0123456789abcdef"
    return tuyacrypto.pv22_seal(key, text, seq=random.randint(1, 0xFFFF), source=0)
