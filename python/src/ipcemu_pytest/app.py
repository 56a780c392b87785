"""App users: the phone app's side through ``ipcemu app`` (probe, call, listen, wake, dps)."""

import json
import re
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

#: ``ipcemu app call`` exit codes (README): what the call came to.
OUTCOMES = {0: "answered", 1: "failed", 3: "rejected", 4: "busy", 5: "not answered", 6: "no device"}


@dataclass
class CallResult:
    """One finished ``ipcemu app call``: exit code, outcome, every event line printed, and the
    SDK error code of the ending when there was one (``-2510`` rejected, ``-2511`` busy...)."""

    exit_code: int
    lines: List[str] = field(default_factory=list)
    stderr: str = ""

    @property
    def outcome(self) -> str:
        return OUTCOMES.get(self.exit_code, f"exit {self.exit_code}")

    @property
    def sdk_error(self) -> Optional[int]:
        for line in reversed(self.lines):
            match = re.search(r"sdkError=(-\d+)", line)
            if match:
                return int(match.group(1))
        return None

    @property
    def events(self) -> List[str]:
        """The call events in order, as ``-> call``, ``<- ring``, ``<- answer``..."""
        out = []
        for line in self.lines:
            match = re.search(r"([<-]-?>?) (\w+) (?:to|from)=", line)
            if match:
                out.append(f"{match.group(1)} {match.group(2)}")
        return out


@dataclass
class WakeResult:
    """One ``ipcemu app wake``: whether DP 149 true came, the latency the app saw (ms), and
    whether the device was awake already (PROTOCOL.md 8.4)."""

    exit_code: int
    latency_ms: Optional[float]
    was_awake: bool
    stdout: str = ""
    stderr: str = ""

    @property
    def awake(self) -> bool:
        return self.exit_code == 0 and self.latency_ms is not None


def dp_argument(dp_id: int, value: Any) -> str:
    """``ID=VALUE`` for ``ipcemu app dps --set/--until``: a bool as true/false, an int as digits, a
    string quoted (so it stays a string whatever the DP's type)."""
    if isinstance(value, bool):
        return f"{dp_id}={'true' if value else 'false'}"
    if isinstance(value, int):
        return f"{dp_id}={value}"
    return f"{dp_id}='{value}'"


class Listener:
    """A running ``ipcemu app listen``: takes calls from devices (doorbell presses)."""

    def __init__(self, args: List[str], ready_timeout: float = 15):
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        self.lines: List[str] = []
        self.stderr_lines: List[str] = []
        self._ready = threading.Event()
        threading.Thread(target=self._read, args=(self.process.stdout, self.lines), daemon=True).start()
        threading.Thread(target=self._read, args=(self.process.stderr, self.stderr_lines), daemon=True).start()
        if not self._ready.wait(ready_timeout):
            self.stop()
            raise RuntimeError("ipcemu app listen did not subscribe: " + "\n".join(self.stderr_lines[-10:]))

    def _read(self, stream, sink: List[str]) -> None:
        for raw in stream:
            line = raw.decode(errors="replace").rstrip("\n")
            sink.append(line)
            if "is waiting for calls" in line:
                self._ready.set()
        self._ready.set()

    def wait_for_line(self, pattern: str, timeout: float = 5) -> str:
        """The first printed line matching the regular expression ``pattern``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if re.search(pattern, line):
                    return line
            time.sleep(0.02)
        raise AssertionError(f"ipcemu app listen printed no line matching {pattern!r} within {timeout:g} s; "
                             f"printed: {self.lines[-20:]}")

    def doorbell_events(self) -> List[str]:
        """The doorbell events printed so far, in order: ``<- 43``, ``ringing``,
        ``-> accept``, ``<- answered``, ``-> heartbeat``, ``<- heartbeat``, ``-> stop``..."""
        out = []
        for line in self.lines:
            match = re.search(r"(<-|->) video_doorbell (\w+) ", line)
            if match:
                out.append(f"{match.group(1)} {match.group(2)}")
            elif re.search(r"<- 43 press ", line):
                out.append("<- 43")
            elif "ringing: doorbell" in line:
                out.append("ringing")
        return out

    def wait(self, timeout: float = 30) -> int:
        """Waits for the process to end (``--calls N`` reached); returns its exit code."""
        return self.process.wait(timeout=timeout)

    def stop(self) -> Optional[int]:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


class AppUser:
    """The phone app signed in as ``user_id``, as the SDK plays it, through ``ipcemu app``."""

    def __init__(self, binary: str, broker_url: str, user_id: str = "user-alice", profile_path: Optional[str] = None):
        self.binary = binary
        self.broker_url = broker_url
        self.user_id = user_id
        self.profile_path = profile_path
        self._listeners: List[Listener] = []

    def _common(self, profile_path: Optional[str]) -> List[str]:
        args = ["--broker", self.broker_url, "--user", self.user_id]
        path = profile_path or self.profile_path
        if path:
            args += ["--profile", path]
        return args

    def _profile_of(self, device: Any) -> Optional[str]:
        return getattr(device, "profile_path", None)

    @staticmethod
    def _dev_id(device: Any) -> str:
        return device if isinstance(device, str) else device.dev_id

    def fetch_call_ability(self, device: Any, wait: float = 3, timeout: float = 30) -> Dict[str, Any]:
        """``fetchDeviceCallAbilityByDevId``: the device's 309 answer as a dict (``ipcemu app probe``)."""
        args = [self.binary, "app", "probe", self._dev_id(device), "--wait", str(wait)] + self._common(self._profile_of(device))
        done = subprocess.run(args, capture_output=True, timeout=timeout)
        if done.returncode not in (0, 1):
            raise AssertionError(f"no ability answer from {self._dev_id(device)} (exit {done.returncode}): "
                                 f"{done.stderr.decode(errors='replace')}")
        return json.loads(done.stdout.decode())

    def call(self, device: Any, timeout: int = 10, hangup_after: Optional[float] = None, video: bool = False,
             call_type: int = 1, extra_args: Optional[List[str]] = None, process_timeout: float = 60) -> CallResult:
        """``startCall`` and wait until the call ends (``ipcemu app call``). With ``hangup_after``
        an answered call is hung up after that many seconds; ``video`` opens the P2P link and
        prints frame statistics."""
        args = [self.binary, "app", "call", self._dev_id(device), "--timeout", str(timeout),
                "--call-type", str(call_type)] + self._common(self._profile_of(device))
        if hangup_after is not None:
            args += ["--hangup-after", str(hangup_after)]
        if video:
            args += ["--video"]
        args += list(extra_args or [])
        done = subprocess.run(args, capture_output=True, timeout=process_timeout)
        return CallResult(exit_code=done.returncode, lines=done.stdout.decode(errors="replace").splitlines(),
                          stderr=done.stderr.decode(errors="replace"))

    def listen(self, answer: str = "auto", answer_delay: float = 0, hangup_after: Optional[float] = None,
               calls: Optional[int] = 1, profile_path: Optional[str] = None, video: bool = False,
               heartbeat_interval: Optional[float] = None, ring_timeout: Optional[float] = None) -> Listener:
        """Waits for calls from devices and doorbell presses (``ipcemu app listen``): ``answer`` is
        ``auto`` or ``accept`` (answer a call, accept a doorbell), ``reject`` or ``stop`` (reject,
        decline with stop), ``busy``, ``ignore`` or ``manual``; ``answer_delay`` delays an answer or
        a reject; ``video`` opens the link once answered or accepted. Returns once subscribed; the
        fixture stops it at the end of the test."""
        args = [self.binary, "app", "listen", "--answer", answer, "--answer-delay", str(answer_delay)] + self._common(profile_path)
        if hangup_after is not None:
            args += ["--hangup-after", str(hangup_after)]
        if video:
            args += ["--video"]
        if heartbeat_interval is not None:
            args += ["--heartbeat-interval", str(heartbeat_interval)]
        if ring_timeout is not None:
            args += ["--ring-timeout", str(ring_timeout)]
        if calls is not None:
            args += ["--calls", str(calls)]
        listener = Listener(args)
        self._listeners.append(listener)
        return listener

    def wake(self, device: Any, wait: float = 10, timeout: float = 60) -> WakeResult:
        """Wakes a sleeping battery doorbell (``ipcemu app wake``: CRC32 of its localKey on
        ``m/w/DEVID``) and waits for DP 149 true; the result has the latency the app saw."""
        args = [self.binary, "app", "wake", self._dev_id(device), "--wait", str(wait)] + self._common(self._profile_of(device))
        done = subprocess.run(args, capture_output=True, timeout=timeout)
        out = done.stdout.decode(errors="replace")
        match = re.search(r"awake: \S+ after (\d+) ms", out)
        return WakeResult(exit_code=done.returncode, latency_ms=float(match.group(1)) if match else None,
                          was_awake="(it was awake)" in out, stdout=out, stderr=done.stderr.decode(errors="replace"))

    def dps(self, device: Any, set: Optional[Dict[int, Any]] = None, query: Optional[List[int]] = None,
            until: Optional[Dict[int, Any]] = None, wait: float = 5, timeout: float = 60) -> Dict[int, Any]:
        """``ipcemu app dps``: sets DPs (protocol 5), queries them (protocol 31; ``[]`` asks for all)
        and returns what the device reported, ``{149: True, ...}``. ``until`` waits for those
        values (``{149: False}``: the doorbell fell asleep). Raises ``AssertionError`` when
        nothing (or not every ``until`` value) was reported within ``wait`` seconds."""
        args = [self.binary, "app", "dps", self._dev_id(device), "--wait", str(wait)]
        for dp_id, value in (set or {}).items():
            args += ["--set", dp_argument(dp_id, value)]
        for dp_id, value in (until or {}).items():
            args += ["--until", dp_argument(dp_id, value)]
        if query is not None:
            args += ["--query"] + [str(i) for i in query]
        args += self._common(self._profile_of(device))
        done = subprocess.run(args, capture_output=True, timeout=timeout)
        if done.returncode != 0:
            raise AssertionError(f"ipcemu app dps {self._dev_id(device)} exited {done.returncode}: "
                                 f"{done.stderr.decode(errors='replace')} {done.stdout.decode(errors='replace')}")
        body = json.loads(done.stdout.decode())
        return {int(key): value for key, value in body["dps"].items()}

    def dps_async(self, device: Any, until: Dict[int, Any], wait: float = 10) -> "subprocess.Popen[bytes]":
        """Starts ``ipcemu app dps --until ...`` and returns at once (the process ends when the
        values were reported); ``finish_dps`` collects it. For a report that comes after the
        test's next step (a doorbell falling asleep)."""
        args = [self.binary, "app", "dps", self._dev_id(device), "--wait", str(wait)]
        for dp_id, value in until.items():
            args += ["--until", dp_argument(dp_id, value)]
        args += self._common(self._profile_of(device))
        return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)

    @staticmethod
    def finish_dps(process: "subprocess.Popen[bytes]", timeout: float = 60) -> Dict[int, Any]:
        out, err = process.communicate(timeout=timeout)
        if process.returncode != 0:
            raise AssertionError(f"ipcemu app dps exited {process.returncode}: {err.decode(errors='replace')}")
        return {int(key): value for key, value in json.loads(out.decode())["dps"].items()}

    def stop(self) -> None:
        for listener in self._listeners:
            listener.stop()
