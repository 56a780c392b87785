"""Virtual devices: ``ipcemu run`` processes driven through the HTTP control API (docs/control.md)."""

import json
import os
import subprocess
import threading
import time
import urllib.error
import urllib.request
import uuid
from typing import Any, Callable, Dict, List, Optional

from .profile import doorbell_profile, to_yaml


class ControlError(Exception):
    """The control API refused a request: ``status`` (400, 404, 409...) and its JSON ``body``
    (``{"error": ..., "field": ...}``)."""

    def __init__(self, status: int, body: Dict[str, Any], url: str):
        self.status = status
        self.body = body
        super().__init__(f"{url}: HTTP {status}: {body.get('error', body)}")


class WaitTimeout(AssertionError):
    """A wait gave up; the message says what was awaited, the state and what was seen."""


class Device:
    """One virtual doorbell: ``ipcemu run --profile P --broker URL --control 127.0.0.1:0``.

    Actions (``press``, ``answer``, ``reject``, ``hangup``...) go through the control API; the
    waits poll the device's state and its call journal, and a timeout names what was seen."""

    def __init__(self, binary: str, broker_url: str, directory: str, profile: Optional[Dict[str, Any]] = None,
                 profile_path: Optional[str] = None, startup_timeout: float = 30, extra_args: Optional[List[str]] = None):
        self.directory = directory
        os.makedirs(directory, exist_ok=True)
        if profile_path is None:
            profile = profile or doorbell_profile()
            profile_path = os.path.join(directory, f"{profile['identity']['devId']}.yaml")
            with open(profile_path, "w") as f:
                f.write(to_yaml(profile) + "\n")
        self.profile = profile
        self.profile_path = profile_path
        self.broker_url = broker_url
        self.log_path = os.path.join(directory, "ipcemu-run-%s.log" % uuid.uuid4().hex[:6])
        self._log = open(self.log_path, "wb")
        args = [binary, "run", "--profile", profile_path, "--broker", broker_url, "--control", "127.0.0.1:0",
                "--console-user", "pytest-console-" + uuid.uuid4().hex[:6]] + list(extra_args or [])
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self._log, stdin=subprocess.DEVNULL)
        self._lines: List[str] = []
        self._url_ready = threading.Event()
        self.control_url = ""
        threading.Thread(target=self._read_stdout, daemon=True).start()
        if not self._url_ready.wait(startup_timeout) or not self.control_url:
            self.stop()
            raise RuntimeError(f"ipcemu run did not start its control API within {startup_timeout} s: "
                               f"{self._log_tail()}")
        devices = self._request("GET", "/api/devices")["devices"]
        self.dev_id: str = devices[0]["devId"]
        self._journal_cursor = 0
        self.wait_until_connected(timeout=startup_timeout)

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            line = raw.decode(errors="replace").rstrip("\n")
            self._lines.append(line)
            marker = "Control API and console: "
            if marker in line and not self.control_url:
                self.control_url = line.split(marker, 1)[1].split()[0].rstrip("/")
                self._url_ready.set()
        self._url_ready.set()

    def _log_tail(self, lines: int = 15) -> str:
        try:
            with open(self.log_path, "rb") as f:
                return "\n".join(f.read().decode(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    # HTTP

    def _request(self, method: str, path: str, body: Optional[Dict[str, Any]] = None, timeout: float = 10) -> Any:
        url = self.control_url + path
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, method=method,
                                         headers={"Content-Type": "application/json"} if data else {})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                text = response.read().decode()
        except urllib.error.HTTPError as error:
            text = error.read().decode(errors="replace")
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = {"error": text}
            raise ControlError(error.code, parsed, url) from None
        return json.loads(text) if text else None

    def _device_path(self, suffix: str = "") -> str:
        return f"/api/devices/{self.dev_id}{suffix}"

    # State

    def state(self) -> Dict[str, Any]:
        """The device's state: ``connected``, ``phase``, ``session``, ``answerPolicy``, ``faults``,
        ``callsEnded``, ``lastCall``, ``media``, ``mqtt``."""
        return self._request("GET", self._device_path())

    @property
    def phase(self) -> str:
        return self.state()["phase"]

    def journal(self, limit: int = 10000) -> List[Dict[str, Any]]:
        """Call journal entries, oldest first: one per call event in or out, one per ended call."""
        return self._request("GET", self._device_path(f"/journal?limit={limit}"))["entries"]

    # Actions

    def press(self, targets: Optional[List[str]] = None, call_type: Optional[int] = None,
              timeout: Optional[float] = None) -> str:
        """Presses the doorbell; returns the session id."""
        body: Dict[str, Any] = {}
        if targets is not None:
            body["targets"] = targets
        if call_type is not None:
            body["callType"] = call_type
        if timeout is not None:
            body["timeout"] = timeout
        return self._request("POST", self._device_path("/press"), body)["sessionId"]

    def answer(self) -> Dict[str, Any]:
        return self._request("POST", self._device_path("/answer"), {})

    def reject(self) -> Dict[str, Any]:
        return self._request("POST", self._device_path("/reject"), {})

    def cancel(self) -> Dict[str, Any]:
        return self._request("POST", self._device_path("/cancel"), {})

    def hangup(self) -> Dict[str, Any]:
        return self._request("POST", self._device_path("/hangup"), {})

    def set_answer_policy(self, policy: str, after_seconds: Optional[float] = None) -> Dict[str, Any]:
        """``answer``, ``reject``, ``ignore``, ``busy`` or ``manual``; ``after_seconds`` delays an
        answer or a reject."""
        body: Dict[str, Any] = {"policy": policy}
        if after_seconds is not None:
            body["afterSeconds"] = after_seconds
        return self._request("PUT", self._device_path("/answer-policy"), body)

    def set_faults(self, heartbeat_replies_suppressed: Optional[bool] = None, reply_delay_ms: Optional[int] = None,
                   acting_busy: Optional[bool] = None) -> Dict[str, Any]:
        """Changes the faults given; the others stay."""
        body: Dict[str, Any] = {}
        if heartbeat_replies_suppressed is not None:
            body["heartbeatRepliesSuppressed"] = heartbeat_replies_suppressed
        if reply_delay_ms is not None:
            body["replyDelayMs"] = reply_delay_ms
        if acting_busy is not None:
            body["actingBusy"] = acting_busy
        return self._request("PUT", self._device_path("/faults"), body)

    def drop_connection(self, seconds: float) -> None:
        self._request("POST", self._device_path("/faults/drop-connection"), {"seconds": seconds})

    def drop_p2p(self) -> int:
        return self._request("POST", self._device_path("/faults/drop-p2p"), {})["dropped"]

    # Waiting

    def _wait(self, awaited: str, timeout: float, check: Callable[[Dict[str, Any]], Any]) -> Any:
        deadline = time.monotonic() + timeout
        phases: List[str] = []
        journal_from = len(self.journal())
        while True:
            state = self.state()
            if not phases or phases[-1] != state["phase"]:
                phases.append(state["phase"])
            result = check(state)
            if result:
                return result
            if time.monotonic() >= deadline:
                seen = [self._describe(e) for e in self.journal()[journal_from:]][-20:]
                raise WaitTimeout(f"device {self.dev_id}: no \"{awaited}\" within {timeout:g} s; "
                                  f"phases: {' -> '.join(phases)}; saw: {', '.join(seen) or 'nothing'}")
            time.sleep(0.02)

    @staticmethod
    def _describe(entry: Dict[str, Any]) -> str:
        if entry.get("kind") == "call":
            return f"call ended {entry.get('outcome')} session={entry.get('session')}"
        arrow = "<-" if entry.get("direction") == "in" else "->"
        text = f"{arrow} {entry.get('event')} session={entry.get('session')} peer={entry.get('peer')}"
        return text + (f" reason={entry['reason']}" if entry.get("reason") else "")

    def wait_until_connected(self, timeout: float = 10) -> None:
        self._wait("connected", timeout, lambda s: s["connected"])

    def wait_for_phase(self, phase: str, timeout: float = 5) -> Dict[str, Any]:
        """Waits until the call phase is ``phase`` (``idle``, ``ringingIncoming``,
        ``ringingOutgoing``, ``answered``); returns the state."""
        return self._wait(f"phase {phase}", timeout, lambda s: s if s["phase"] == phase else None)

    def wait_until_ringing(self, timeout: float = 5) -> str:
        """Waits until an incoming call rings the device; returns its session id."""
        state = self.wait_for_phase("ringingIncoming", timeout)
        return state["session"]["sessionId"]

    def wait_for_call_end(self, timeout: float = 5) -> Dict[str, Any]:
        """Waits for the next ended call (after those earlier waits returned) in the journal;
        returns its entry: ``session``, ``outcome``, ``reason``, ``endedBy``, ``peers``..."""
        def ended(_: Dict[str, Any]) -> Optional[Dict[str, Any]]:
            entries = self.journal()
            for i in range(self._journal_cursor, len(entries)):
                if entries[i].get("kind") == "call":
                    self._journal_cursor = i + 1
                    entry = dict(entries[i])
                    entry["sessionId"] = entry.get("session")
                    return entry
            return None
        return self._wait("a call ends", timeout, ended)

    def wait_for_frames_sent(self, count: int, timeout: float = 20) -> Dict[str, Any]:
        """Waits until the device has sent ``count`` video frames over P2P links."""
        return self._wait(f"{count} video frames sent", timeout,
                          lambda s: s["media"] if s["media"]["framesSent"] >= count else None)

    # Lifecycle

    def stop(self, timeout: float = 10) -> Optional[int]:
        """SIGTERM (a call is hung up, the device goes offline), then the exit status."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout:
            self.process.stdout.close()
        self._log.close()
        return self.process.returncode


class Fleet:
    """N virtual doorbells from one profile, ``dev_id`` with ``{index}`` (one ``ipcemu run`` each,
    started in parallel)."""

    def __init__(self, devices: List[Device]):
        self.devices = devices

    def __len__(self) -> int:
        return len(self.devices)

    def __getitem__(self, index: int) -> Device:
        return self.devices[index]

    def __iter__(self):
        return iter(self.devices)

    @property
    def dev_ids(self) -> List[str]:
        return [d.dev_id for d in self.devices]

    def stop(self) -> None:
        for device in self.devices:
            device.stop()
