"""Device profiles built in Python and written as YAML for ``ipcemu run --profile``."""

import json
import uuid
from typing import Any, Dict, List, Optional


def doorbell_profile(dev_id: Optional[str] = None, household: Optional[List[str]] = None,
                 answer_policy: str = "answer", answer_delay: float = 0, **sections: Any) -> Dict[str, Any]:
    """A doorbell profile for fast tests: plain payloads, default topics, a small stamped test
    pattern (320x240 at 15 fps) and a 10 s connect timeout; heartbeat timers stay at the
    protocol's defaults, which ``ipcemu app`` uses too (10 s interval, 30 s timeout). ``sections``
    replace whole top-level sections (``timers={...}``)."""
    profile: Dict[str, Any] = {
        "identity": {
            "devId": dev_id or "py-doorbell-" + uuid.uuid4().hex[:8],
            "localKey": "0123456789abcdef",
            "p2pPassword": "test-p2p-password",
            "category": "sp_dpsxj",
        },
        "capabilities": {
            "video": {"main": {"width": 320, "height": 240, "fps": 15}, "sub": {"width": 160, "height": 120, "fps": 15}},
        },
        "behaviour": {
            "answerPolicy": answer_policy,
            "answerDelay": answer_delay,
            "household": household if household is not None else ["user-alice"],
            "callTimeout": 10,
        },
        "timers": {"heartbeatInterval": 10, "heartbeatTimeout": 30, "connectTimeout": 10},
        "camera": {"type": "testPattern"},
        "security": "plain",
    }
    profile.update(sections)
    return profile


def battery_doorbell_profile(dev_id: Optional[str] = None, household: Optional[List[str]] = None,
                             sleep_after: float = 2, wake_latency: float = 0.5, ring_timeout: float = 15,
                             **sections: Any) -> Dict[str, Any]:
    """A battery doorbell (PROTOCOL.md 8, ``doorbell.kind: doorbell``): a press sends protocol 43,
    it sleeps after ``sleep_after`` idle seconds (DP 149 false) and wakes ``wake_latency`` seconds
    after a wake. Otherwise as ``doorbell_profile``."""
    profile = doorbell_profile(dev_id=dev_id or "py-battdoor-" + uuid.uuid4().hex[:8], household=household)
    profile["identity"]["category"] = "dghsxj"
    profile["doorbell"] = {"kind": "doorbell", "ringTimeout": ring_timeout}
    profile["power"] = {"lowPower": True, "sleepAfter": sleep_after, "wakeLatency": wake_latency, "source": "battery"}
    profile.update(sections)
    return profile


def to_yaml(value: Any, indent: int = 0) -> str:
    """YAML for nested dicts, lists and scalars (JSON scalars are valid YAML scalars)."""
    pad = "  " * indent
    if isinstance(value, dict):
        lines = []
        for key, item in value.items():
            if isinstance(item, (dict, list)) and item:
                lines.append(f"{pad}{key}:\n{to_yaml(item, indent + 1)}")
            else:
                lines.append(f"{pad}{key}: {json.dumps(item)}")
        return "\n".join(lines)
    if isinstance(value, list):
        lines = []
        for item in value:
            if isinstance(item, (dict, list)) and item:
                lines.append(f"{pad}-\n{to_yaml(item, indent + 1)}")
            else:
                lines.append(f"{pad}- {json.dumps(item)}")
        return "\n".join(lines)
    return pad + json.dumps(value)
