"""mosquitto as the cloud's broker: a TLS-only listener (the test CA's server certificate), a
password file and an ACL file that allow exactly the topics of PROTOCOL.md 9 per client.

Accounts (src/mqtt_service.c `tuya_mqtt_signature_tool` derives the device's):
- `acon_<uuid>` (direct link, before activation), password md5(authkey)[4..11] hex: reads d/ai/<uuid>.
- `<devId>` (device link, after activation), password md5(secKey)[4..11] hex: reads
  smart/device/in/<devId>, rpc/rsp/<devId>, rpc/file/<devId>; writes smart/device/out/<devId>,
  rpc/req/<devId>, and ipcemu's retained meta smart/device/meta/<devId> and .../online (PROTOCOL.md 1).
- the app simulator's account: writes smart/device/in/<devId>, reads smart/device/out/<devId> and
  smart/device/meta/<devId>[/online] of every bound device.
- the stand-in's own account (pushes tokens): everything.

Unbinding removes the device's account and reloads mosquitto (SIGHUP), which disconnects clients
whose credentials no longer hold; the device's next CONNECT gets CONNACK 5 (not authorised).
mosquitto's log (stderr) is read line by line: which client subscribed to what (a token is pushed
only once the device listens), and every refusal (bad credentials, denied topics), which is logged.
"""
import os
import re
import shutil
import signal
import subprocess
import threading
import time

from . import lifetime, tuyacrypto

_SUBSCRIBE = re.compile(r"Received SUBSCRIBE from (\S+)")
_TOPIC = re.compile(r"^\t(\S+) \(QoS \d\)")
_GONE = re.compile(r"Client (\S+) (?:disconnected|closed its connection|has exceeded timeout)|Socket error on client (\S+)")
_REFUSAL = re.compile(r"not authori[sz]ed|Denied|OpenSSL Error|protocol error|bad username or password|CONNACK to \S+ \(\d, [1-9]\)",
                      re.IGNORECASE)


class PortTaken(RuntimeError):
    """mosquitto could not listen: the free port chosen was taken before it bound it (another
    process on this machine, between our probe and its bind)."""


class Broker:
    def __init__(self, directory, pki, port, standin_password, app_user, app_password, log, count=lambda code: None):
        self.directory = directory
        self.pki = pki
        self.port = port
        self.log = log
        self.count = count
        self.standin_password = standin_password
        self.app_user = app_user
        self.app_password = app_password
        self.conf = os.path.join(directory, "mosquitto.conf")
        self.passwd = os.path.join(directory, "passwd")
        self.acl = os.path.join(directory, "acl")
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        # "Reloading config." lines mosquitto logged: a reload is waited for (see reload()).
        self._reloads = 0
        # Set once mosquitto logs "mosquitto version ... running": its listeners are bound (a
        # connect alone could reach whoever took the port first).
        self._running = threading.Event()
        self._uuids = []
        self._devices = {}   # devId -> password
        self._subscriptions = {}   # client id -> set of filters
        self._subscribed = threading.Condition(self._lock)
        self._last_subscriber = None
        self.process = None

    # accounts -------------------------------------------------------------------------------

    def set_licences(self, uuids_and_authkeys):
        with self._lock:
            self._uuids = list(uuids_and_authkeys)

    def add_device(self, dev_id, sec_key):
        # One change of the accounts at a time, written whole and reloaded before the next: two
        # activations at once (a fleet) must never let mosquitto load a password file that lacks a
        # device, which would refuse that device with CONNACK 5 as if it had been unbound.
        with self._write_lock:
            with self._lock:
                self._devices[dev_id] = tuyacrypto.mqtt_password(sec_key)
            self._write_accounts()
            self.reload()

    def remove_device(self, dev_id):
        with self._write_lock:
            with self._lock:
                self._devices.pop(dev_id, None)
            self._write_accounts()
            self.reload()

    def _write_accounts(self):
        with self._lock:
            users = [("standin", self.standin_password), (self.app_user, self.app_password)]
            users += [(f"acon_{uuid}", tuyacrypto.mqtt_password(authkey)) for uuid, authkey in self._uuids]
            users += list(self._devices.items())
            acl = ["# written by the Tuya stand-in: exactly the topics of PROTOCOL.md 9 per client", "",
                   "user standin", "topic readwrite #", ""]
            for uuid, _ in self._uuids:
                acl += [f"user acon_{uuid}", f"topic read d/ai/{uuid}", ""]
            app = [f"user {self.app_user}"]
            for dev_id in self._devices:
                acl += [f"user {dev_id}",
                        f"topic read smart/device/in/{dev_id}",
                        f"topic write smart/device/out/{dev_id}",
                        f"topic readwrite smart/device/meta/{dev_id}",
                        f"topic readwrite smart/device/meta/{dev_id}/online",
                        f"topic write rpc/req/{dev_id}",
                        f"topic read rpc/rsp/{dev_id}",
                        f"topic read rpc/file/{dev_id}", ""]
                app += [f"topic write smart/device/in/{dev_id}",
                        f"topic read smart/device/out/{dev_id}",
                        f"topic read smart/device/meta/{dev_id}",
                        f"topic read smart/device/meta/{dev_id}/online"]
            acl += app + [""]
        plain = self.passwd + ".tmp"
        with open(plain, "w") as f:
            os.chmod(plain, 0o600)
            f.write("".join(f"{user}:{password}\n" for user, password in users))
        subprocess.run([shutil.which("mosquitto_passwd") or "mosquitto_passwd", "-U", plain],
                       check=True, capture_output=True)
        os.replace(plain, self.passwd)
        with open(self.acl + ".tmp", "w") as f:
            f.write("\n".join(acl))
        os.replace(self.acl + ".tmp", self.acl)

    # process --------------------------------------------------------------------------------

    def start(self):
        self._write_accounts()
        with open(self.conf, "w") as f:
            f.write("\n".join([
                "# written by the Tuya stand-in (scripts/tuya_standin/broker.py)",
                "per_listener_settings false",
                "allow_anonymous false",
                f"password_file {self.passwd}",
                f"acl_file {self.acl}",
                "persistence false",
            ] + (["user root"] if os.geteuid() == 0 else []) + [   # else it drops to `mosquitto`, who cannot read our files
                "set_tcp_nodelay true",
                "log_dest stderr",
                "log_type all",
                "log_timestamp true",
                "connection_messages true",
                f"listener {self.port} 127.0.0.1",
                f"cafile {self.pki.ca_pem}",
                f"certfile {self.pki.server_pem}",
                f"keyfile {self.pki.server_key}",
                "tls_version tlsv1.2",
                "",
            ]))
        self._running.clear()
        self.process = subprocess.Popen(
            [shutil.which("mosquitto") or "/usr/sbin/mosquitto", "-c", self.conf],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, errors="replace", preexec_fn=lifetime.die_with_parent)
        self._log_thread = threading.Thread(target=self._read_log, name="mosquitto-log", daemon=True)
        self._log_thread.start()

    def reload(self):
        """SIGHUP, then wait (at most 3 s) until mosquitto logs that it reloads: a device told of
        its activation right after must find its account there."""
        if not (self.process and self.process.poll() is None):
            return
        with self._lock:
            before = self._reloads
        self.process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 3
        with self._lock:
            while self._reloads <= before and time.monotonic() < deadline:
                self._subscribed.wait(max(0.0, deadline - time.monotonic()))

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()

    def _read_log(self):
        current = None
        with open(os.path.join(self.directory, "mosquitto.log"), "a") as keep:
            for line in self.process.stderr:
                keep.write(line)
                keep.flush()
                text = line.rstrip("\n")
                body = text.split(": ", 1)[1] if re.match(r"^\d+: ", text) else text
                topic = _TOPIC.match(body)
                if topic and current:
                    with self._lock:
                        self._subscriptions.setdefault(current, set()).add(topic.group(1))
                        self._subscribed.notify_all()
                    continue
                current = None
                if body.startswith("mosquitto version") and body.endswith(" running"):
                    self._running.set()
                    continue
                match = _SUBSCRIBE.search(body)
                if match:
                    current = match.group(1)
                    continue
                gone = _GONE.search(body)
                if gone:
                    with self._lock:
                        self._subscriptions.pop(gone.group(1) or gone.group(2), None)
                if _REFUSAL.search(body):
                    self.log(f"broker refused: {body}")
                    if "Denied" in body:
                        self.count("ACL_DENIED")
                    elif "CONNACK" in body:
                        self.count("CONNACK_" + body.rstrip(")").rsplit(" ", 1)[-1])
                if "Reloading config" in body:
                    with self._lock:
                        self._reloads += 1
                        self._subscribed.notify_all()
                if "Opening ipv4 listen socket" in body or "mosquitto version" in body and "running" in body:
                    with self._lock:
                        self._subscribed.notify_all()

    def wait_for_subscription(self, client_id, topic, timeout):
        """True once `client_id` has subscribed to `topic` (and not left since), within `timeout` s."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while topic not in self._subscriptions.get(client_id, set()):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._subscribed.wait(left)
            return True

    def wait_until_listening(self, timeout=10):
        import socket
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self._log_thread.join(timeout=1)  # the log holds the reason once the reader is done
                log_path = os.path.join(self.directory, "mosquitto.log")
                with open(log_path, errors="replace") as f:
                    taken = "Address already in use" in f.read()
                kind = PortTaken if taken else RuntimeError
                raise kind(f"mosquitto exited with {self.process.returncode} (see {log_path})")
            if not self._running.is_set():
                time.sleep(0.02)
                continue
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("mosquitto did not start listening in time")
