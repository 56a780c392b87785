"""PROTOCOL.md 8 from the app's side through the fixtures: a battery doorbell that sleeps, is woken,
pressed, and accepted; data points set and read back."""

import re

from ipcemu_pytest import battery_doorbell_profile


def test_battery_doorbell_sleeps_wakes_press_accept(ipcemu_device_factory, ipcemu_app):
    device = ipcemu_device_factory(profile=battery_doorbell_profile(sleep_after=3, wake_latency=0.5))
    # 8.4: idle for sleepAfter -> DP 149 false (the wait starts before the device falls asleep).
    asleep = ipcemu_app.dps_async(device, until={149: False}, wait=15)
    assert ipcemu_app.finish_dps(asleep)[149] is False

    woke = ipcemu_app.wake(device)
    assert woke.awake, woke.stderr
    assert not woke.was_awake
    # wakeLatency is 0.5 s: the app sees DP 149 true no sooner, and well within a few seconds.
    assert 450 <= woke.latency_ms < 5000, woke.stdout

    listener = ipcemu_app.listen(answer="accept", hangup_after=1, calls=1, heartbeat_interval=0.3)
    call_id = device.press()
    listener.wait_for_line(r"ringing: doorbell .* was pressed \(call " + re.escape(call_id) + r"\)", timeout=10)
    assert listener.wait(timeout=20) == 0
    events = listener.doorbell_events()
    assert events[:4] == ["<- 43", "ringing", "-> accept", "<- answered"], listener.lines
    assert "-> heartbeat" in events and "<- heartbeat" in events, listener.lines
    assert events[-1] == "-> stop", listener.lines
    assert any(re.search(r"call ended: hungUp", line) for line in listener.lines), listener.lines


def test_doorbell_dps_set_and_query(ipcemu_device_factory, ipcemu_app):
    device = ipcemu_device_factory(profile=battery_doorbell_profile(sleep_after=60))
    reported = ipcemu_app.dps(device, set={147: 30})
    assert reported[147] == 30
    # A read-only DP is not applied: its value is reported back.
    assert ipcemu_app.dps(device, set={145: 5})[145] == 100
    everything = ipcemu_app.dps(device, query=[])
    assert everything[149] is True and everything[146] == "0" and everything[147] == 30
    assert set(ipcemu_app.dps(device, query=[145, 149])) >= {145, 149}
