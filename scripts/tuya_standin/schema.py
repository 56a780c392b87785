"""The product schema activation returns: the DPs of PROTOCOL.md 8.3, in the shape Tuya's schema
JSON has (`id`, `code`, `mode`, `type` "obj", `property` with `type` bool/value/enum/string)."""
import json

_DPS = [
    (115, "movement_detect_pic", "ro", {"type": "string", "maxlen": 255}),
    (134, "motion_switch", "rw", {"type": "bool"}),
    (136, "doorbell_active", "ro", {"type": "string", "maxlen": 255}),
    (145, "wireless_electricity", "ro", {"type": "value", "min": 0, "max": 100, "scale": 0, "step": 1, "unit": "%"}),
    (146, "wireless_powermode", "ro", {"type": "enum", "range": ["0", "1"]}),
    (147, "wireless_lowpower", "rw", {"type": "value", "min": 0, "max": 100, "scale": 0, "step": 1, "unit": "%"}),
    (149, "wireless_awake", "rw", {"type": "bool"}),
    (150, "record_switch", "rw", {"type": "bool"}),
    (151, "record_mode", "rw", {"type": "enum", "range": ["1", "2"]}),
    (154, "doorbell_pic", "ro", {"type": "string", "maxlen": 255}),
    (185, "alarm_message", "ro", {"type": "string", "maxlen": 255}),
    (212, "initiative_message", "ro", {"type": "string", "maxlen": 255}),
]

ALL_DP_IDS = [dp[0] for dp in _DPS]


def schema_text(dp_ids=None):
    """The schema as the JSON string activation carries in `schema`; `dp_ids` limits it."""
    wanted = set(ALL_DP_IDS if dp_ids is None else dp_ids)
    items = [{"id": i, "code": code, "mode": mode, "type": "obj", "property": prop}
             for i, code, mode, prop in _DPS if i in wanted]
    return json.dumps(items, separators=(",", ":"))
