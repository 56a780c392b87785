"""The stand-in cloud: starts the pieces, holds their shared state, and stops them."""
import base64
import json
import os
import secrets
import socket
import sys
import threading
import time

from . import broker as broker_module
from . import control, https_api, mqtt, pki, registry, rpc, schema, turn


def free_port(kind=socket.SOCK_STREAM):
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Standin:
    def __init__(self, directory, licences, regions, time_window, app_user, app_password, use_turn,
                 schema_dp_ids, api_port=0, clock_offset=0, quiet=False):
        self.directory = directory
        self.host = "127.0.0.1"
        self.regions = regions
        self.quiet = quiet
        self._lock = threading.Lock()
        self.refusals = {}
        self.registry = registry.Registry(licences)
        # The SDK reaches the ATOP API on port 443 whatever httpsSelfUrl says (src/iotdns.c scans
        # "https://%[^/]" and fixes the port at 443), so the API listens on 443 of an address of its
        # own in 127/8 (any 127.x.y.z is loopback on Linux): stand-ins side by side do not collide.
        self.api_host, api_socket = self._bind_api(api_port)
        self.pki = pki.TestPKI(directory, extra_ips=[self.api_host])
        self.ca_b64 = base64.b64encode(self.pki.ca_der_bytes).decode()
        self.schema_dp_ids = schema_dp_ids
        self.schema = schema.schema_text(schema_dp_ids)
        self.mqtt_port = free_port()
        self.standin_password = secrets.token_hex(8)
        self.app_user, self.app_password = app_user, app_password
        self.broker = broker_module.Broker(directory, self.pki, self.mqtt_port, self.standin_password,
                                           app_user, app_password, self.log, self.count_refusal)
        self.broker.set_licences([(lic.uuid, lic.device_authkey) for lic in licences])
        api = https_api.CloudAPI(self, time_window, clock_offset)
        self.api_server = https_api.make_server(api, self.pki, self.api_host, 0, "atop", sock=api_socket)
        self.api_port = self.api_server.server_address[1]
        self.iotdns_server = https_api.make_server(api, self.pki, "127.0.0.1", 0, "iotdns")
        self.iotdns_port = self.iotdns_server.server_address[1]
        self.control_server = control.make_control(self, 0)
        self.turn = None
        if use_turn:
            low = 40000 + secrets.randbelow(20000)
            self.turn = turn.Turn(directory, free_port(socket.SOCK_DGRAM), (low, low + 99), "ipcemu", secrets.token_hex(8))

    def _bind_api(self, port):
        """(address, bound server socket holder) for the ATOP API: 443 on a random 127.x.y.z, or
        `port` on 127.0.0.1 when given (a device following the SDK cannot reach that one)."""
        for _ in range(20):
            host = "127.0.0.1" if port else "127.%d.%d.%d" % tuple(1 + secrets.randbelow(254) for _ in range(3))
            try:
                return host, https_api.bind(host, port or 443)
            except PermissionError:
                raise RuntimeError("cannot listen on port 443 (run as root, or lower "
                                   "net.ipv4.ip_unprivileged_port_start), or give --api-port") from None
            except OSError:
                if port:
                    raise
        raise RuntimeError("no free 127.x.y.z:443 found")

    def start(self):
        # A free port is free when probed, not when mosquitto binds it: with tests running side by
        # side, another process can take it in between. Then a new one is tried (a few times).
        for attempt in range(5):
            self.broker.start()
            try:
                self.broker.wait_until_listening()
                break
            except broker_module.PortTaken:
                if attempt == 4:
                    raise
                self.log(f"MQTT port {self.mqtt_port} was taken before mosquitto bound it; trying another")
                self.mqtt_port = free_port()
                self.broker.port = self.mqtt_port
        self.rpc = rpc.RPCResponder(self)
        self.rpc.start()
        if self.turn:
            self.turn.start()

    def stop(self):
        if getattr(self, "rpc", None):
            self.rpc.stop()
        for server in (self.control_server, self.api_server, self.iotdns_server):
            server.shutdown()
        self.broker.stop()
        if self.turn:
            self.turn.stop()

    def ready(self):
        return {
            "ready": True, "pid": os.getpid(), "dir": self.directory,
            "caFile": self.pki.ca_pem, "caDer": self.pki.ca_der, "wrongCaFile": self.pki.wrong_ca_pem,
            "iotdns": f"127.0.0.1:{self.iotdns_port}", "atop": f"https://{self.api_host}" + ("" if self.api_port == 443 else f":{self.api_port}") + "/d.json",
            "mqtt": f"127.0.0.1:{self.mqtt_port}", "mqttURL": f"mqtts://127.0.0.1:{self.mqtt_port}",
            "control": f"http://127.0.0.1:{self.control_server.server_address[1]}",
            "app": {"username": self.app_user, "password": self.app_password},
            "licences": [{"uuid": l.uuid, "authkey": l.authkey, "productKey": l.product_key}
                         for l in self.registry.licences()],
            "iceToken": [self.turn.ice_server] if self.turn else [],
            "schema": json.loads(self.schema),
        }

    # shared by the servers ------------------------------------------------------------------

    def log(self, text):
        if not self.quiet:
            print(f"tuya-standin: {text}", file=sys.stderr, flush=True)

    def count_refusal(self, code):
        with self._lock:
            self.refusals[code] = self.refusals.get(code, 0) + 1

    def device_activated(self, record):
        self.broker.add_device(record.dev_id, record.sec_key)

    def state(self):
        # localKey: what Tuya's cloud API gives the phone app of the home, so an app simulator can
        # seal its pv2.2 messages to the device.
        devices = [{"devId": d.dev_id, "uuid": d.uuid, "bound": d.bound, "activatedAt": d.activated_at,
                    "activatedAtMs": d.activated_at_ms,
                    "localKey": d.local_key, "versions": d.versions, "skill": d.skill,
                    "outMessages": d.out_messages, "reportedDps": dict(d.reported_dps), "dpsNotInSchema": sorted(d.unknown_dps)}
                   for d in (self.registry.device_for_uuid(l.uuid) for l in self.registry.licences()) if d]
        with self._lock:
            refusals = dict(self.refusals)
        return {"devices": devices, "refusals": refusals}

    def bind(self, body):
        uuid = body.get("uuid")
        licence = self.registry.licence(uuid) if isinstance(uuid, str) else None
        if licence is None:
            return 404, {"error": f"unknown uuid {uuid!r}"}
        region = body.get("region", self.regions[0])
        env = body.get("env", "pro")
        seal = body.get("seal", "authkey")
        wait = float(body.get("wait", 15))
        if not self.broker.wait_for_subscription(f"acon_{uuid}", f"d/ai/{uuid}", wait):
            return 409, {"error": f"acon_{uuid} did not subscribe to d/ai/{uuid} within {wait} s"}
        token = self.registry.issue_token(uuid, region, env, float(body.get("ttl", 600)))
        payload = control.token_payload(token, licence.device_authkey, seal)
        try:
            client = mqtt.MiniMQTT("127.0.0.1", self.mqtt_port, self.pki.ca_pem, f"standin-{secrets.token_hex(4)}",
                                   "standin", self.standin_password)
            client.publish(f"d/ai/{uuid}", payload, qos=1)
            client.close()
        except (OSError, mqtt.MQTTError) as error:
            return 502, {"error": f"publishing the token failed: {error}"}
        self.log(f"bind: token {token.value} (region {region}, env {env}, seal {seal}) pushed on d/ai/{uuid}")
        return 200, {"token": token.value, "region": region, "env": env, "expiresAt": int(token.expires_at)}

    def unbind(self, body):
        uuid = body.get("uuid")
        record = self.registry.unbind(uuid) if isinstance(uuid, str) else None
        if record is None:
            return 404, {"error": f"no device activated for uuid {uuid!r}"}
        self.broker.remove_device(record.dev_id)
        self.log(f"unbind: devId {record.dev_id} (uuid {uuid}) removed from its home; its next CONNECT gets CONNACK 5")
        return 200, {"devId": record.dev_id}
