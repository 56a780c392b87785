"""A local stand-in for Tuya's cloud (PROTOCOL.md 9), for ipcemu's own tests.

Modules, one job each: `tuyacrypto` (the SDK's signing and encryption, recomputed server-side),
`pki` (the throwaway test CA), `registry` (licences, tokens, devices), `https_api` (iotdns and the
ATOP API over TLS), `broker` (mosquitto with a TLS-only listener, passwords and ACLs), `mqtt`
(a tiny MQTT 3.1.1 publisher), `turn` (coturn), `control` (the loopback control endpoint).
"""
