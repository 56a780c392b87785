"""Children that end with the stand-in: mosquitto and coturn get SIGTERM when the stand-in's
thread that started them dies (prctl PR_SET_PDEATHSIG), even after a SIGKILL of the stand-in."""
import ctypes
import signal

_PR_SET_PDEATHSIG = 1


def die_with_parent():
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass
