"""The fixtures against the real ipcemu binary and a real mosquitto."""

import pytest

from ipcemu_pytest import WaitTimeout, doorbell_profile, to_yaml
from ipcemu_pytest.device import ControlError


def test_profile_yaml_round_trip_is_valid(ipcemu_binary, tmp_path):
    import subprocess
    path = tmp_path / "p.yaml"
    path.write_text(to_yaml(doorbell_profile(dev_id="yaml-door", answer_policy="ignore", answer_delay=2)) + "\n")
    done = subprocess.run([ipcemu_binary, "profile", "check", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "devId yaml-door" in done.stdout
    # answerDelay does not apply to ignore: a warning, not an error.
    assert "warning: behaviour.answerDelay" in done.stderr


def test_app_calls_device_answered_with_video(ipcemu_device, ipcemu_app):
    result = ipcemu_app.call(ipcemu_device, timeout=10, hangup_after=8, video=True)
    assert result.exit_code == 0, result.lines + [result.stderr]
    assert result.outcome == "answered"
    assert result.events[:3] == ["-> call", "<- ring", "<- answer"]
    assert any("video summary:" in line for line in result.lines)
    end = ipcemu_device.wait_for_call_end(timeout=10)
    assert end["outcome"] == "hungUp"
    summary = next(line for line in result.lines if "video summary:" in line)
    assert int(summary.split("video summary: ")[1].split()[0]) > 0, summary


def test_press_rings_the_listening_app(ipcemu_device, ipcemu_app):
    listener = ipcemu_app.listen(answer="auto", hangup_after=0.5, calls=1)
    session = ipcemu_device.press(targets=["user-alice"])
    listener.wait_for_line(r"ringing: .* is calling")
    assert listener.wait(timeout=15) == 0
    end = ipcemu_device.wait_for_call_end(timeout=10)
    assert end["sessionId"] == session
    assert end["outcome"] == "hungUp"


def test_rejecting_device_and_policy_flip(ipcemu_device_factory, ipcemu_app):
    device = ipcemu_device_factory(answer_policy="reject", answer_delay=0.3)
    result = ipcemu_app.call(device, timeout=5)
    assert result.outcome == "rejected"
    assert result.sdk_error == -2510
    device.set_answer_policy("busy")
    assert ipcemu_app.call(device, timeout=5).outcome == "busy"
    assert device.state()["answerPolicy"] == "busy"


def test_manual_device_waits_and_faults(ipcemu_device_factory, ipcemu_app):
    device = ipcemu_device_factory(answer_policy="manual")
    listener = ipcemu_app.listen(answer="manual", calls=None)
    with pytest.raises(WaitTimeout) as timeout:
        device.wait_until_ringing(timeout=0.3)
    assert "no \"phase ringingIncoming\"" in str(timeout.value) and "phases: idle" in str(timeout.value)
    with pytest.raises(ControlError) as refused:
        device.answer()
    assert refused.value.status == 409
    device.set_faults(acting_busy=True)
    assert device.state()["faults"]["actingBusy"] is True
    listener.stop()


def test_probe(ipcemu_device, ipcemu_app):
    answer = ipcemu_app.fetch_call_ability(ipcemu_device)
    assert answer["devId"] == ipcemu_device.dev_id
    assert answer["support"] is True and answer["rtcCapability"] == 7


def test_fleet_each_device_answers(ipcemu_fleet_factory, ipcemu_app):
    fleet = ipcemu_fleet_factory(3)
    assert len(set(fleet.dev_ids)) == 3
    for device in fleet:
        assert ipcemu_app.call(device, timeout=5, hangup_after=0.2).outcome == "answered"
    for device in fleet:
        assert device.wait_for_call_end(timeout=10)["outcome"] == "hungUp"
