"""The pytest plugin: fixtures for a broker, devices, fleets and app users.

Registered through the ``pytest11`` entry point; without installing, ``pytest -p ipcemu_pytest.plugin``.
"""

import os
import threading
from typing import Any, Callable, Dict, List, Optional

import pytest

from .app import AppUser
from .binary import find_ipcemu
from .broker import Broker
from .device import Device, Fleet
from .profile import doorbell_profile


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("ipcemu")
    group.addoption("--ipcemu-bin", default=None,
                    help="the ipcemu binary (default: $IPCEMU_BIN, ipcemu on PATH, or the checkout's .build)")
    group.addoption("--ipcemu-broker", default=None,
                    help="use this broker (mqtt://host:port) instead of a private mosquitto per test "
                         "(default: $IPCEMU_BROKER_URL)")


class ExternalBroker:
    """A broker that is already running (``--ipcemu-broker``); ``stop`` does nothing."""

    def __init__(self, url: str):
        self.url = url

    def stop(self) -> None:
        pass


@pytest.fixture(scope="session")
def ipcemu_binary(request: Any) -> str:
    """The path of the ipcemu executable."""
    return find_ipcemu(request.config.getoption("--ipcemu-bin"))


@pytest.fixture
def ipcemu_broker(request: Any):
    """A private mosquitto on a free loopback port for this test (``.url``, ``.host``, ``.port``),
    or the broker given by ``--ipcemu-broker`` / ``$IPCEMU_BROKER_URL``."""
    url = request.config.getoption("--ipcemu-broker") or os.environ.get("IPCEMU_BROKER_URL")
    broker = ExternalBroker(url) if url else Broker()
    yield broker
    broker.stop()


@pytest.fixture
def ipcemu_device_factory(ipcemu_binary: str, ipcemu_broker: Any, tmp_path: Any):
    """Starts virtual doorbells: ``factory(profile=None, profile_path=None, **doorbell_profile_args)``.
    ``profile`` is a dict (see ``ipcemu_pytest.doorbell_profile``), ``profile_path`` a YAML file.
    Every device is stopped (SIGTERM) after the test."""
    started: List[Device] = []

    def factory(profile: Optional[Dict[str, Any]] = None, profile_path: Optional[str] = None, **kwargs: Any) -> Device:
        if profile is None and profile_path is None:
            profile = doorbell_profile(**kwargs)
        device = Device(ipcemu_binary, ipcemu_broker.url, str(tmp_path / "devices"), profile=profile,
                        profile_path=profile_path)
        started.append(device)
        return device

    yield factory
    for device in started:
        device.stop()


@pytest.fixture
def ipcemu_device(ipcemu_device_factory: Callable[..., Device]) -> Device:
    """One virtual doorbell (the fast test profile: answers at once, household ``user-alice``)."""
    return ipcemu_device_factory()


@pytest.fixture
def ipcemu_fleet_factory(ipcemu_device_factory: Callable[..., Device]):
    """Starts ``count`` doorbells from one template, in parallel:
    ``factory(count, dev_id="door-{index}", **doorbell_profile_args)``."""

    def factory(count: int, dev_id: str = "py-door-{index}", **kwargs: Any) -> Fleet:
        devices: List[Optional[Device]] = [None] * count
        errors: List[BaseException] = []

        def start(i: int) -> None:
            try:
                devices[i] = ipcemu_device_factory(dev_id=dev_id.replace("{index}", str(i)), **kwargs)
            except BaseException as error:  # reported below, after every thread ended
                errors.append(error)

        threads = [threading.Thread(target=start, args=(i,)) for i in range(count)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        return Fleet([d for d in devices if d is not None])

    return factory


@pytest.fixture
def ipcemu_app_factory(ipcemu_binary: str, ipcemu_broker: Any):
    """App users: ``factory(user_id="user-alice", profile_path=None)``; their listeners are
    stopped after the test."""
    users: List[AppUser] = []

    def factory(user_id: str = "user-alice", profile_path: Optional[str] = None) -> AppUser:
        user = AppUser(ipcemu_binary, ipcemu_broker.url, user_id=user_id, profile_path=profile_path)
        users.append(user)
        return user

    yield factory
    for user in users:
        user.stop()


@pytest.fixture
def ipcemu_app(ipcemu_app_factory: Callable[..., AppUser]) -> AppUser:
    """The app user ``user-alice`` (the test profile's household)."""
    return ipcemu_app_factory()
