#!/usr/bin/env python3
"""A local stand-in for Tuya's cloud, for ipcemu's tests (PROTOCOL.md 9, issue 21).

Starts, on 127.0.0.1 with a throwaway test CA:
  iotdns     HTTPS  POST /v2/url_config           -> caArr[0], httpsSelfUrl, mqttsSelfUrl
  ATOP API   HTTPS  POST /d.json?a=...&sign=...   on port 443 of a random 127.x.y.z (the SDK
                                                  always uses 443: src/iotdns.c; needs root or
                                                  CAP_NET_BIND_SERVICE), tuya.device.active, versions.update,
                                                  skill.update, info.sync (others: success)
  broker     mosquitto, TLS-only listener, password file and per-client ACLs
  TURN       coturn (turnserver), one static user (unless --no-turn)
  control    HTTP   POST /standin/bind, POST /standin/unbind, GET /standin/state

and prints ONE JSON line on stdout when everything listens ("ready"): ports, the CA files, the
licences, the app account, and `iceToken` (see below). Logs (each refusal with its reason) go to
stderr. SIGTERM or SIGINT stops everything; exit 0.

Every ATOP request is checked as the cloud must: the SDK's parameter order, the md5 sign
recomputed with the authkey (before activation) or the secKey (after), `t` within --time-window,
the body decrypting with that key, a known uuid/devId, the product of the licence, and an
unexpired, unused token issued for that uuid. A refusal answers HTTP 200 with
{"success":false,"errorCode":"...","errorMsg":"..."}; SING_VALIDATE_FALED is Tuya's own code (and
spelling) and GATEWAY_NOT_EXISTS the SDK's (src/atop_base.c: an unknown devId); the others
are ours: DEVICE_UUID_NOT_EXIST, TIME_INVALID,
DATA_DECRYPT_FAILED, PARAM_ILLEGAL, PRODUCT_NOT_EXIST, TOKEN_INVALID, TOKEN_EXPIRED,
DEVICE_UNBOUND, API_VERSION_WRONG, API_NOT_EXIST.

The TURN relay: the ready line's `iceToken` is a list ready to be the `token` of a 302 offer
(PROTOCOL.md 4): [{"urls":"turn:127.0.0.1:PORT?transport=udp","username":"ipcemu",
"credential":"...","ttl":86400}]. An app simulator puts it in its offer (and uses relay-only
ICE) so the call's media must go through coturn; the device uses the servers the offer names.

Example:
  scripts/tuya-cloud-standin.py --licence uuid0123456789abcd,0123456789abcdef0123456789abcdef,pk12345678 &
  # read the ready line, then:
  ipcemu run --profile device-profiles/doorbell.yaml --cloud tuya --uuid uuid0123456789abcd \\
     --authkey 0123456789abcdef0123456789abcdef --product-key pk12345678 --state-dir /tmp/cloud-state \\
     --iotdns 127.0.0.1:IOTDNS_PORT --cloud-ca DIR/ca.pem
  curl -s -X POST CONTROL/standin/bind -d '{"uuid":"uuid0123456789abcd"}'
"""
import argparse
import json
import os
import secrets
import signal
import string
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from tuya_standin import registry, schema  # noqa: E402
from tuya_standin.standin import Standin  # noqa: E402


def licence(text):
    parts = text.split(",")
    if len(parts) not in (3, 4) or not all(parts):
        raise argparse.ArgumentTypeError("expected UUID,AUTHKEY,PRODUCTKEY[,DEVICEAUTHKEY]")
    if len(parts[1]) < 16:
        raise argparse.ArgumentTypeError("the authkey must have at least 16 characters (32 on Tuya's platform)")
    return registry.Licence(*parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", help="folder for the CA, configs and logs (default: a new temporary folder)")
    parser.add_argument("--licence", type=licence, action="append", default=[],
                        help="UUID,AUTHKEY,PRODUCTKEY[,DEVICEAUTHKEY] (repeatable; default: one random licence). "
                             "DEVICEAUTHKEY: the authkey the device holds when it is not the licence's (tests): the "
                             "broker's acon_ password and the token push use it, the ATOP API refuses its sign")
    parser.add_argument("--regions", default="EU,US,AY,IN,UE,WE", help="regions iotdns knows (first: the default for bind)")
    parser.add_argument("--time-window", type=int, default=300, help="seconds t may differ from the clock (default 300)")
    parser.add_argument("--clock-offset", type=int, default=0,
                        help="seconds the cloud's clock is ahead of this machine's (tests: every t is then off)")
    parser.add_argument("--app-user", default="app", help="the app simulator's broker account (default app)")
    parser.add_argument("--app-password", default=None, help="its password (default: random, in the ready line)")
    parser.add_argument("--schema-dps", default=None,
                        help="comma-separated DP ids the product schema has (default: all of PROTOCOL.md 8.3)")
    parser.add_argument("--no-turn", action="store_true", help="do not start coturn")
    parser.add_argument("--api-port", type=int, default=0,
                        help="serve the ATOP API on this port of 127.0.0.1 instead of 443 of a random 127.x.y.z "
                             "(the SDK always uses 443 for it: only for clients that take the port from httpsSelfUrl)")
    args = parser.parse_args()

    directory = args.dir or tempfile.mkdtemp(prefix="tuya-standin-")
    os.makedirs(directory, exist_ok=True)
    licences = args.licence or [registry.Licence(
        "uuid" + "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in range(16)),
        secrets.token_hex(16), "pk" + secrets.token_hex(7))]
    dp_ids = [int(x) for x in args.schema_dps.split(",") if x] if args.schema_dps else schema.ALL_DP_IDS
    cloud = Standin(directory, licences, args.regions.split(","), args.time_window, args.app_user,
                    args.app_password or secrets.token_hex(8), not args.no_turn, dp_ids, api_port=args.api_port,
                    clock_offset=args.clock_offset)
    # A parent may have started us with signals blocked (Foundation's Process does): unblock the
    # ones we handle, and so for mosquitto (SIGHUP reloads it) and coturn, which inherit the mask.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGHUP})
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    try:
        cloud.start()
        print(json.dumps(cloud.ready()), flush=True)
        done.wait()
    finally:
        cloud.log("stopping")
        cloud.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
