"""What the stand-in cloud knows: licences (uuid, authkey, productKey), pairing tokens, and the
devices activation made (devId, secKey, localKey, bound or not). One lock; every method is short.
"""
import secrets
import string
import threading
import time

_ALNUM = string.ascii_letters + string.digits


def _random_text(n, alphabet=_ALNUM):
    return "".join(secrets.choice(alphabet) for _ in range(n))


class Licence:
    """`device_authkey`: the authkey the device was given when it is not the licence's (tests: the
    broker and the token push use it, so the device reaches activation, where the ATOP API, which
    knows the licence's, refuses its sign)."""

    def __init__(self, uuid, authkey, product_key, device_authkey=None):
        self.uuid = uuid
        self.authkey = authkey
        self.product_key = product_key
        self.device_authkey = device_authkey or authkey


class Token:
    def __init__(self, value, uuid, region, env, expires_at):
        self.value = value
        self.uuid = uuid
        self.region = region
        self.env = env
        self.expires_at = expires_at
        self.used = False


class DeviceRecord:
    def __init__(self, dev_id, uuid, sec_key, local_key, product_key):
        self.dev_id = dev_id
        self.uuid = uuid
        self.sec_key = sec_key
        self.local_key = local_key
        self.product_key = product_key
        self.bound = True
        self.versions = None
        self.skill = None
        self.activated_at = int(time.time())
        # Milliseconds too: a fleet's pacing of activations is checked from these.
        self.activated_at_ms = int(time.time() * 1000)
        # DP id -> last value the device reported (protocol 4), and reported ids the schema lacks.
        self.reported_dps = {}
        self.unknown_dps = set()
        # Messages on smart/device/out/<devId> that opened as pv2.2 under the localKey.
        self.out_messages = 0


class Registry:
    def __init__(self, licences):
        self._lock = threading.Lock()
        self._licences = {lic.uuid: lic for lic in licences}
        self._tokens = {}
        self._devices = {}
        self._dev_by_uuid = {}

    def licence(self, uuid):
        with self._lock:
            return self._licences.get(uuid)

    def licences(self):
        with self._lock:
            return list(self._licences.values())

    def issue_token(self, uuid, region, env, ttl, value=None):
        with self._lock:
            # 8 characters: the SDK holds at most MAX_LENGTH_TOKEN (include/tuya_iot.h).
            token = Token(value or _random_text(8, string.ascii_uppercase + string.digits),
                          uuid, region, env, time.time() + ttl)
            self._tokens[token.value] = token
            return token

    def token(self, value):
        with self._lock:
            return self._tokens.get(value)

    def activate(self, licence, token, requested_dev_id):
        """A new (or renewed) device for `licence`: the same devId as before for this uuid (also when
        the SDK sends the devId it kept), new secKey and localKey **[ours]**."""
        with self._lock:
            token.used = True
            previous = self._dev_by_uuid.get(licence.uuid)
            dev_id = previous or ("eb" + _random_text(18, string.ascii_lowercase + string.digits))
            record = DeviceRecord(dev_id, licence.uuid, _random_text(16), _random_text(16), licence.product_key)
            self._devices[dev_id] = record
            self._dev_by_uuid[licence.uuid] = dev_id
            return record, requested_dev_id is not None and requested_dev_id != dev_id

    def device(self, dev_id):
        with self._lock:
            return self._devices.get(dev_id)

    def device_for_uuid(self, uuid):
        with self._lock:
            dev_id = self._dev_by_uuid.get(uuid)
            return self._devices.get(dev_id) if dev_id else None

    def unbind(self, uuid):
        with self._lock:
            dev_id = self._dev_by_uuid.get(uuid)
            record = self._devices.get(dev_id) if dev_id else None
            if record:
                record.bound = False
            return record

    def bound_devices(self):
        with self._lock:
            return [d for d in self._devices.values() if d.bound]
