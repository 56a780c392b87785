"""coturn (`turnserver`) on loopback with one static long-term-credential user, for a call whose
ICE must go through the relay. `--allow-loopback-peers`: the device and the app are both on
127.0.0.1 here, which coturn refuses to relay to by default."""
import os
import shutil
import subprocess
import time

from . import lifetime


class Turn:
    def __init__(self, directory, port, relay_ports, user, password, realm="ipcemu.test"):
        self.directory = directory
        self.port = port
        self.relay_ports = relay_ports
        self.user = user
        self.password = password
        self.realm = realm
        self.process = None

    @property
    def ice_server(self):
        """One entry of the 302 offer's `token` list (PROTOCOL.md 4)."""
        return {"urls": f"turn:127.0.0.1:{self.port}?transport=udp", "username": self.user,
                "credential": self.password, "ttl": 86400}

    def start(self):
        binary = shutil.which("turnserver") or "/usr/bin/turnserver"
        low, high = self.relay_ports
        log = open(os.path.join(self.directory, "turnserver.log"), "a")
        self.process = subprocess.Popen([
            binary, "-n", "--listening-ip", "127.0.0.1", "--listening-port", str(self.port),
            "--relay-ip", "127.0.0.1", "--min-port", str(low), "--max-port", str(high),
            "--lt-cred-mech", "--user", f"{self.user}:{self.password}", "--realm", self.realm,
            "--no-tls", "--no-dtls", "--no-cli", "--allow-loopback-peers", "--fingerprint",
            "--no-multicast-peers", "--userdb", os.path.join(self.directory, "turndb"),
            "--pidfile", os.path.join(self.directory, "turnserver.pid"),
            "--log-file", "stdout", "--simple-log",
        ], stdout=log, stderr=subprocess.STDOUT, preexec_fn=lifetime.die_with_parent)
        time.sleep(0.2)
        if self.process.poll() is not None:
            raise RuntimeError(f"turnserver exited with {self.process.returncode} (see {self.directory}/turnserver.log)")

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
