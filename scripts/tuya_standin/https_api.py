"""iotdns (`POST /v2/url_config`) and the ATOP API (`POST /d.json?a=...`) over real TLS.

Every request is checked as strictly as the cloud must (PROTOCOL.md 9.1, 9.3): the parameters in
the SDK's order (src/atop_base.c `atop_base_request`: a, devId, et, t, uuid, v, then sign), the sign
recomputed with the key the cloud holds (authkey before activation, secKey after), `t` within the
time window, the body decrypting with that key to a JSON object whose `t` equals the query's, and
for activation a known uuid, its productKey and an unexpired token issued for it. A refusal is the
cloud's plain JSON `{"success":false,"errorCode":"...","errorMsg":"..."}` (HTTP 200) and one log
line naming the reason.
"""
import http.server
import json
import ssl
import threading
import time
import urllib.parse

from . import tuyacrypto

MAX_BODY = 64 * 1024

# The fields of the activation body in the order src/atop_service.c writes them; `optional` ones
# appear only when the SDK has them.
ACTIVATE_FIELDS = [
    ("token", True), ("softVer", True), ("productKey", True), ("protocolVer", True),
    ("baselineVer", True), ("options", True), ("productKeyStr", False), ("devId", False),
    ("modules", False), ("feature", False), ("skillParam", False), ("devAttribute", True),
    ("cadVer", True), ("cdVer", True), ("t", True),
]

# API -> the `v` the SDK sends (None: any) and whether it names the device by uuid or devId.
APIS = {
    "tuya.device.active": ("4.4", "uuid"),
    "tuya.device.versions.update": ("4.1", "devId"),
    "tuya.device.info.sync": ("1.0", "devId"),
    "tuya.device.skill.update": (None, "devId"),
    "tuya.device.reset": ("4.0", "devId"),
    "tuya.device.dynamic.config.get": ("2.0", "devId"),
    "tuya.device.upgrade.get": ("4.4", "devId"),
    "tuya.device.upgrade.silent.get": ("4.4", "devId"),
}


class Refusal(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


class CloudAPI:
    """The state the handlers share; `cloud` is the Standin (registry, pki, ports, log, broker)."""

    def __init__(self, cloud, time_window, clock_offset=0):
        self.cloud = cloud
        self.time_window = time_window
        # Seconds the cloud's clock is ahead of this machine's (tests: a device whose t is off).
        self.clock_offset = clock_offset

    # iotdns ---------------------------------------------------------------------------------

    def url_config(self, body, api_port):
        """The endpoints: the ATOP server's address, the broker's, and the CA of both."""
        try:
            request = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise Refusal("PARAM_ILLEGAL", f"iotdns body is not JSON: {error}")
        if not isinstance(request, dict):
            raise Refusal("PARAM_ILLEGAL", "iotdns body is not a JSON object")
        keys = {}
        config = request.get("config")
        if not isinstance(config, list):
            raise Refusal("PARAM_ILLEGAL", "iotdns body has no 'config' list")
        for item in config:
            if isinstance(item, dict) and isinstance(item.get("key"), str):
                keys[item["key"]] = item.get("need_ca")
        for wanted in ("httpsSelfUrl", "mqttsSelfUrl"):
            if keys.get(wanted) is not True:
                raise Refusal("PARAM_ILLEGAL", f"iotdns config lacks {{'key':'{wanted}','need_ca':true}}")
        if not isinstance(request.get("env"), str) or not request["env"]:
            raise Refusal("PARAM_ILLEGAL", "iotdns body has no 'env'")
        region = request.get("region")
        if region is not None and region not in self.cloud.regions:
            raise Refusal("REGION_NOT_EXIST", f"unknown region '{region}' (known: {','.join(self.cloud.regions)})")
        api_host = self.cloud.api_host if api_port == 443 else f"{self.cloud.api_host}:{api_port}"
        return {
            "caArr": [self.cloud.ca_b64],
            "httpsSelfUrl": {"addr": f"https://{api_host}/d.json", "ca": "1"},
            "mqttsSelfUrl": {"addr": f"{self.cloud.host}:{self.cloud.mqtt_port}", "ca": "1"},
            "ttl": 600,
        }

    # ATOP -----------------------------------------------------------------------------------

    def atop(self, raw_query, body):
        now = int(time.time()) + self.clock_offset
        params = urllib.parse.parse_qsl(raw_query, keep_blank_values=True)
        names = [k for k, _ in params]
        values = dict(params)
        if len(set(names)) != len(names):
            raise Refusal("PARAM_ILLEGAL", f"repeated query parameter in {names}")
        api = values.get("a")
        if not api:
            raise Refusal("API_NOT_EXIST", "no 'a' (API name) in the query")
        expected_v, id_kind = APIS.get(api, (None, "devId"))
        sdk_order = [k for k in ("a", "devId", "et", "t", "uuid", "v") if k in values] + ["sign"]
        unknown = [k for k in names if k not in ("a", "devId", "et", "t", "uuid", "v", "sign")]
        if unknown:
            raise Refusal("PARAM_ILLEGAL", f"{api}: unknown query parameter(s) {unknown}")
        if names != sdk_order:
            raise Refusal("SING_VALIDATE_FALED", f"{api}: query parameters {names} are not in the SDK's order {sdk_order}")
        if values.get("et") != "1":
            raise Refusal("PARAM_ILLEGAL", f"{api}: et must be 1, got {values.get('et')!r}")
        if expected_v is not None and values.get("v") != expected_v:
            raise Refusal("API_VERSION_WRONG", f"{api}: v must be {expected_v}, got {values.get('v')!r}")
        sign = values.get("sign", "")
        if len(sign) != 32 or sign != sign.lower():
            raise Refusal("SING_VALIDATE_FALED", f"{api}: sign must be 32 lower-case hex characters, got {sign!r}")
        try:
            t = int(values.get("t", ""))
        except ValueError:
            raise Refusal("PARAM_ILLEGAL", f"{api}: t is not an integer: {values.get('t')!r}")

        # Who is asking, and the key the cloud holds for them.
        licence = device = None
        if id_kind == "uuid":
            if "devId" in values or "uuid" not in values:
                raise Refusal("PARAM_ILLEGAL", f"{api} names the device by uuid (and no devId)")
            licence = self.cloud.registry.licence(values["uuid"])
            if licence is None:
                raise Refusal("DEVICE_UUID_NOT_EXIST", f"{api}: unknown uuid {values['uuid']!r} (no such licence)")
            key, key_name = licence.authkey, "authkey"
        else:
            if "devId" not in values or "uuid" in values:
                raise Refusal("PARAM_ILLEGAL", f"{api} names the device by devId (and no uuid)")
            device = self.cloud.registry.device(values["devId"])
            if device is None:
                raise Refusal("GATEWAY_NOT_EXISTS", f"{api}: unknown devId {values['devId']!r} (never activated here)")
            key, key_name = device.sec_key, "secKey"

        expected_sign = tuyacrypto.sign([(k, values[k]) for k in sdk_order[:-1]], key)
        if sign != expected_sign:
            who = values.get("uuid") or values.get("devId")
            raise Refusal("SING_VALIDATE_FALED",
                          f"{api}: the sign does not match the {key_name} of {who} (got {sign}, expected {expected_sign})")
        if abs(t - now) > self.time_window:
            raise Refusal("TIME_INVALID", f"{api}: t={t} is {t - now:+d} s from the cloud's clock (window {self.time_window} s)")

        try:
            text = tuyacrypto.decode_request_body(key, body)
        except (tuyacrypto.CryptoError, UnicodeDecodeError) as error:
            raise Refusal("DATA_DECRYPT_FAILED", f"{api}: the body does not decrypt with the {key_name}: {error}")
        if text.endswith("\x00"):   # the SDK's dynamic.config.get counts the NUL (strlen + 1)
            text = text[:-1]
        try:
            pairs = json.loads(text, object_pairs_hook=list)
        except json.JSONDecodeError as error:
            raise Refusal("PARAM_ILLEGAL", f"{api}: the decrypted body is not JSON: {error}: {text[:120]!r}")
        if not isinstance(pairs, list) or (pairs and not isinstance(pairs[0], tuple)):
            raise Refusal("PARAM_ILLEGAL", f"{api}: the decrypted body is not a JSON object")
        data = dict(pairs)
        if data.get("t") != t:
            raise Refusal("PARAM_ILLEGAL", f"{api}: the body's t ({data.get('t')!r}) is not the query's t ({t})")

        if api == "tuya.device.active":
            return self._activate(licence, [k for k, _ in pairs], data, now)
        return self._device_api(api, device, data, now)

    def _activate(self, licence, order, data, now):
        expected = [name for name, required in ACTIVATE_FIELDS if required or name in data]
        extra = [k for k in order if k not in dict(ACTIVATE_FIELDS)]
        if extra:
            raise Refusal("PARAM_ILLEGAL", f"activation body has unknown field(s) {extra}")
        if order != expected:
            raise Refusal("PARAM_ILLEGAL", f"activation body fields {order} differ from the SDK's {expected}")
        for name in ("token", "softVer", "productKey", "protocolVer", "baselineVer", "options", "cadVer", "cdVer"):
            if not isinstance(data[name], str):
                raise Refusal("PARAM_ILLEGAL", f"activation body: {name} is not a string")
        if not isinstance(data["devAttribute"], int) or isinstance(data["devAttribute"], bool):
            raise Refusal("PARAM_ILLEGAL", "activation body: devAttribute is not an integer")
        if data["protocolVer"] != "2.2":
            raise Refusal("PARAM_ILLEGAL", f"activation body: protocolVer must be 2.2, got {data['protocolVer']!r}")
        try:
            options = json.loads(data["options"])
            if not isinstance(options.get("isFK"), bool):
                raise ValueError("no boolean isFK")
        except (ValueError, AttributeError) as error:
            raise Refusal("PARAM_ILLEGAL", f"activation body: options {data['options']!r} is not the SDK's: {error}")
        if data["productKey"] != licence.product_key:
            raise Refusal("PRODUCT_NOT_EXIST",
                          f"productKey {data['productKey']!r} is not the product of uuid {licence.uuid} ({licence.product_key})")
        token = self.cloud.registry.token(data["token"])
        if token is None:
            raise Refusal("TOKEN_INVALID", f"unknown token {data['token']!r} (never issued here)")
        if token.uuid != licence.uuid:
            raise Refusal("TOKEN_INVALID", f"token {token.value} was issued for uuid {token.uuid}, not {licence.uuid}")
        if token.used:
            raise Refusal("TOKEN_INVALID", f"token {token.value} was already used for an activation")
        if token.expires_at <= time.time():
            raise Refusal("TOKEN_EXPIRED", f"token {token.value} expired {time.time() - token.expires_at:.1f} s ago")
        record, devid_changed = self.cloud.registry.activate(licence, token, data.get("devId"))
        self.cloud.device_activated(record)
        result = {
            "devId": record.dev_id, "secKey": record.sec_key, "localKey": record.local_key,
            "schemaId": "ipcemu-doorbell-" + "-".join(str(i) for i in self.cloud.schema_dp_ids),
            "schema": self.cloud.schema, "stdTimeZone": "+01:00", "resetFactory": False,
        }
        self.cloud.log(f"activated uuid {licence.uuid} as devId {record.dev_id} (token {token.value}"
                       + (f"; the device asked for devId {data.get('devId')}" if devid_changed else "") + ")")
        return licence.authkey, {"result": result, "success": True, "t": now}

    def _device_api(self, api, device, data, now):
        if api == "tuya.device.info.sync":
            status = "enable" if device.bound else "reset"
            return device.sec_key, {"result": {"status": status}, "success": True, "t": now}
        if not device.bound:
            raise Refusal("DEVICE_UNBOUND", f"{api}: devId {device.dev_id} was removed from its home (unbound)")
        if api == "tuya.device.versions.update":
            versions = data.get("versions")
            try:
                parsed = json.loads(versions) if isinstance(versions, str) else None
            except json.JSONDecodeError:
                parsed = None
            if not isinstance(parsed, list) or not parsed:
                raise Refusal("PARAM_ILLEGAL", f"versions.update: 'versions' is not a JSON array in a string: {versions!r}")
            device.versions = parsed
            self.cloud.log(f"versions of {device.dev_id}: {versions}")
        elif api == "tuya.device.skill.update":
            device.skill = {k: v for k, v in data.items() if k != "t"}
            self.cloud.log(f"skill of {device.dev_id}: {json.dumps(device.skill)}")
        else:
            self.cloud.log(f"{api} from {device.dev_id}: answered success (not modelled further)")
        return device.sec_key, {"result": True, "success": True, "t": now}


def bind(host, port):
    """A listening TCP socket on `host`:`port` (bound before the certificate naming `host` exists)."""
    import socket
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(64)
    except OSError:
        sock.close()
        raise
    return sock


def make_server(api, pki, host, port, role, sock=None):
    """A threading HTTPS server on `host`:`port` (0: a free one). `role` "iotdns" serves
    /v2/url_config only, "atop" /d.json only (two servers, as h2.iot-dns.com and the region's API
    host are two on the real cloud: a device that ignored the iotdns answer would be caught)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "ipcemu-tuya-standin"
        timeout = 10

        def log_message(self, fmt, *args):   # quiet: refusals and activations are logged instead
            pass

        def _answer(self, status, obj):
            data = json.dumps(obj, separators=(",", ":")).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json;charset=UTF-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
            self.close_connection = True

        def _refuse(self, refusal, what, status=200):
            api.cloud.log(f"refused {what}: {refusal.code}: {refusal.message}")
            api.cloud.count_refusal(refusal.code)
            self._answer(status, {"success": False, "errorCode": refusal.code, "errorMsg": refusal.message,
                                  "t": int(time.time())})

        def do_GET(self):
            self._refuse(Refusal("METHOD_NOT_ALLOWED", f"GET {self.path}: the cloud answers POST only"), "GET", 405)

        def do_POST(self):
            path, _, query = self.path.partition("?")
            length = self.headers.get("Content-Length")
            if length is None or not length.isdigit() or int(length) > MAX_BODY:
                self._refuse(Refusal("PARAM_ILLEGAL", f"Content-Length {length!r} missing or over {MAX_BODY}"), path, 400)
                return
            body = self.rfile.read(int(length))
            if path == "/v2/url_config" and role == "iotdns":
                try:
                    answer = api.url_config(body, api.cloud.api_port)
                except Refusal as refusal:
                    self._refuse(refusal, "iotdns url_config", 400)
                    return
                api.cloud.log(f"iotdns: endpoints for region {json.loads(body).get('region', '(none)')}")
                self._answer(200, answer)
            elif path == "/d.json" and role == "atop":
                api_name = dict(urllib.parse.parse_qsl(query)).get("a", "?")
                try:
                    key, answer = api.atop(query, body)
                except Refusal as refusal:
                    self._refuse(refusal, api_name)
                    return
                text = json.dumps(answer, separators=(",", ":"))
                self._answer(200, {"result": tuyacrypto.encode_result(key, text), "t": answer["t"], "success": True})
            else:
                self._refuse(Refusal("API_NOT_EXIST", f"no such path {path}"), path, 404)

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True

        def get_request(self):
            sock, address = super().get_request()
            return context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address

        def handle_error(self, request, client_address):
            import sys
            error = sys.exc_info()[1]
            if isinstance(error, (ssl.SSLError, ConnectionError, TimeoutError, OSError)):
                api.cloud.log(f"refused a connection from {client_address[0]}:{client_address[1]}: TLS or socket error: {error}")
                api.cloud.count_refusal("TLS")
            else:
                api.cloud.log(f"internal error serving {client_address}: {error!r}")

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(pki.server_pem, pki.server_key)
    if sock is None:
        server = Server((host, port), Handler)
    else:
        server = Server(sock.getsockname(), Handler, bind_and_activate=False)
        server.socket.close()
        server.socket = sock
        server.server_address = sock.getsockname()
    thread = threading.Thread(target=server.serve_forever, name=role, daemon=True)
    thread.start()
    return server
