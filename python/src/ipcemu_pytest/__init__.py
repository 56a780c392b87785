"""pytest fixtures for ipcemu: a broker, virtual doorbells, fleets and app users.

The plugin (``ipcemu_pytest.plugin``) registers itself with pytest through the ``pytest11`` entry
point when the package is installed (``pip install ./python``).
"""

from .app import AppUser, CallResult, Listener, WakeResult
from .binary import find_ipcemu
from .broker import Broker
from .device import ControlError, Device, Fleet, WaitTimeout
from .profile import battery_doorbell_profile, doorbell_profile, to_yaml

__all__ = [
    "AppUser", "Broker", "CallResult", "ControlError", "Device", "Fleet", "Listener", "WaitTimeout",
    "WakeResult", "find_ipcemu", "battery_doorbell_profile", "doorbell_profile", "to_yaml",
]
