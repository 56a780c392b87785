"""The cloud's side of the device link (PROTOCOL.md 9.4), as one MQTT client of the stand-in's:

- API calls over MQTT (src/matop_service.c): it reads `rpc/req/<devId>` and answers on
  `rpc/rsp/<devId>` with `{"id","data":{"result":{"success","result"},"t"}}`. The upgrade checks get
  success with no result ("no upgrade"); any other API a plain success. A request that is not the
  SDK's JSON is logged as a refusal and not answered.
- What the device publishes on `smart/device/out/<devId>`: each payload must be pv2.2 sealed with
  the localKey activation gave it; anything else is logged as a refusal (PAYLOAD_NOT_PV22). DP
  reports (protocol 4) are kept: `GET /standin/state` shows each device's last reported value per
  DP, and which reported DPs its schema lacks."""
import json
import socket
import threading
import time

from . import mqtt, tuyacrypto


class RPCResponder:
    def __init__(self, cloud):
        self.cloud = cloud
        self.client = None
        self.stopping = False

    def start(self):
        self.client = mqtt.MiniMQTT("127.0.0.1", self.cloud.mqtt_port, self.cloud.pki.ca_pem, "standin-rpc",
                                    "standin", self.cloud.standin_password)
        self.client.subscribe("rpc/req/+")
        self.client.subscribe("smart/device/out/+")
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
            if topic.startswith("rpc/req/"):
                self._answer(topic, payload)
            elif topic.startswith("smart/device/out/"):
                self._device_message(topic.rsplit("/", 1)[-1], payload)

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

    def _device_message(self, dev_id, payload):
        device = self.cloud.registry.device(dev_id)
        if device is None:
            return
        try:
            _, _, text = tuyacrypto.pv22_open(device.local_key, payload)
            message = json.loads(text)
            if not isinstance(message, dict) or not isinstance(message.get("protocol"), int) or "data" not in message:
                raise ValueError('not an envelope {"protocol":<int>,"t":...,"data":...}')
        except (tuyacrypto.CryptoError, UnicodeDecodeError, ValueError) as error:
            self.cloud.log(f"refused a message of {dev_id} on smart/device/out/{dev_id}: not pv2.2 under its localKey: {error}")
            self.cloud.count_refusal("PAYLOAD_NOT_PV22")
            return
        device.out_messages += 1
        if message["protocol"] == 4 and isinstance(message["data"], dict) and isinstance(message["data"].get("dps"), dict):
            known = set(self.cloud.schema_dp_ids)
            for dp, value in message["data"]["dps"].items():
                device.reported_dps[dp] = value
                if not dp.isdigit() or int(dp) not in known:
                    device.unknown_dps.add(dp)
            self.cloud.log(f"DP report of {dev_id}: {json.dumps(message['data']['dps'])}")
