"""Finding the ipcemu binary."""

import os
import shutil
from typing import Optional


def find_ipcemu(explicit: Optional[str] = None) -> str:
    """The ipcemu executable: ``explicit``, else ``$IPCEMU_BIN``, else ``ipcemu`` on PATH, else
    ``.build/debug/ipcemu`` or ``.build/release/ipcemu`` of the ipcemu checkout this file is in."""
    candidates = [explicit, os.environ.get("IPCEMU_BIN"), shutil.which("ipcemu")]
    here = os.path.dirname(os.path.abspath(__file__))
    for _ in range(5):
        here = os.path.dirname(here)
        candidates += [os.path.join(here, ".build", "debug", "ipcemu"), os.path.join(here, ".build", "release", "ipcemu")]
    for path in candidates:
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise FileNotFoundError(
        "ipcemu binary not found: build it (swift build) and set IPCEMU_BIN or pass --ipcemu-bin")
