"""A private mosquitto on a free loopback port."""

import os
import shutil
import socket
import subprocess
import tempfile
import time
from typing import Optional


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class Broker:
    """A private ``mosquitto`` (Debian package ``mosquitto``) with its own configuration in a
    temporary folder: loopback only, anonymous, ``set_tcp_nodelay true``. ``url`` is what
    ``ipcemu run --broker`` and ``ipcemu app --broker`` take."""

    def __init__(self, host: str = "127.0.0.1", executable: Optional[str] = None, startup_timeout: float = 10):
        self.host = host
        self.executable = executable or shutil.which("mosquitto") or "/usr/sbin/mosquitto"
        if not os.path.exists(self.executable):
            raise FileNotFoundError("mosquitto not installed (Debian package mosquitto)")
        self.directory = tempfile.mkdtemp(prefix="ipcemu-pytest-broker-")
        self.log_path = os.path.join(self.directory, "mosquitto.log")
        self.port = 0
        self.process: Optional[subprocess.Popen] = None
        last = ""
        for _ in range(8):  # a port taken meanwhile by someone else: try another
            self.port = free_port(host)
            config = os.path.join(self.directory, "mosquitto.conf")
            with open(config, "w") as f:
                f.write(f"listener {self.port} {host}\nallow_anonymous true\nset_tcp_nodelay true\n"
                        f"persistence false\nlog_dest file {self.log_path}\n"
                        + ("user root\n" if os.geteuid() == 0 else ""))
            self.process = subprocess.Popen([self.executable, "-c", config], stdout=subprocess.DEVNULL,
                                            stderr=subprocess.PIPE)
            if self._wait_listening(startup_timeout):
                return
            last = self._stop_process()
        raise RuntimeError(f"mosquitto did not start: {last}")

    @property
    def url(self) -> str:
        return f"mqtt://{self.host}:{self.port}"

    def _wait_listening(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                return False
            try:
                with socket.create_connection((self.host, self.port), timeout=0.2):
                    return True
            except OSError:
                time.sleep(0.02)
        return False

    def _stop_process(self) -> str:
        if self.process is None:
            return ""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        err = self.process.stderr.read().decode(errors="replace") if self.process.stderr else ""
        if self.process.stderr:
            self.process.stderr.close()
        self.process = None
        return err.strip()

    def stop(self) -> None:
        """Stops mosquitto and removes its folder. Safe to call twice."""
        self._stop_process()
        shutil.rmtree(self.directory, ignore_errors=True)
