"""API calls over MQTT (PROTOCOL.md 9.4, src/matop_service.c): the stand-in reads `rpc/req/<devId>`
as the cloud does and answers on `rpc/rsp/<devId>` with `{"id","data":{"result":{"success",
"result"},"t"}}`. The upgrade checks get success with no result ("no upgrade"); any other API a
plain success. A request that is not the SDK's JSON is logged as a refusal and not answered."""
import json
import socket
import threading
import time

from . import mqtt


class RPCResponder:
    def __init__(self, cloud):
        self.cloud = cloud
        self.client = None
        self.stopping = False

    def start(self):
        self.client = mqtt.MiniMQTT("127.0.0.1", self.cloud.mqtt_port, self.cloud.pki.ca_pem, "standin-rpc",
                                    "standin", self.cloud.standin_password)
        self.client.subscribe("rpc/req/+")
        threading.Thread(target=self._loop, name="rpc", daemon=True).start()

    def stop(self):
        self.stopping = True
        if self.client:
            self.client.close()

    def _loop(self):
        self.client.sock.settimeout(20)
        while not self.stopping:
            try:
                topic, payload = self.client.receive()
            except (socket.timeout, TimeoutError):
                try:
                    self.client._send(0xC0, b"")   # PINGREQ
                except OSError:
                    return
                continue
            except (OSError, mqtt.MQTTError):
                return
            self._answer(topic, payload)

    def _answer(self, topic, payload):
        dev_id = topic.rsplit("/", 1)[-1]
        try:
            request = json.loads(payload.decode("utf-8"))
            if not isinstance(request, dict) or not isinstance(request.get("id"), int) or not isinstance(request.get("a"), str) \
                    or not isinstance(request.get("t"), int) or "data" not in request:
                raise ValueError("not {\"id\":<int>,\"a\":<api>,\"t\":<int>,\"data\":...}")
        except (UnicodeDecodeError, ValueError) as error:
            self.cloud.log(f"refused an API call over MQTT from {dev_id}: {error}: {payload[:120]!r}")
            self.cloud.count_refusal("RPC_MALFORMED")
            return
        api = request["a"]
        result = None if api in ("tuya.device.upgrade.silent.get", "tuya.device.upgrade.get") else True
        answer = {"id": request["id"], "data": {"result": {"success": True, "result": result}, "t": int(time.time())}}
        self.client.publish(f"rpc/rsp/{dev_id}", json.dumps(answer, separators=(",", ":")).encode(), qos=0)
        self.cloud.log(f"rpc: {api} from {dev_id} answered ({'no upgrade' if result is None else 'success'})")
