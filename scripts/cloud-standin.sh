#!/usr/bin/env bash
# Starts the local Tuya cloud stand-in (scripts/tuya-cloud-standin.py) with one licence and prints,
# ready to paste, the commands that join an emulated doorbell to it, pair it, call it and unbind it
# (PROTOCOL.md 9, issue 21). Ctrl-C stops the stand-in (mosquitto and coturn with it).
#
#   scripts/cloud-standin.sh [STATE_DIR]      (default state folder: /tmp/ipcemu-cloud-demo)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
state="${1:-/tmp/ipcemu-cloud-demo}"
ipcemu="${IPCEMU_BIN:-$root/.build/debug/ipcemu}"
uuid="ipcemudemo0001"
authkey="Kq7Wm2Xp9Ld4Rt6Yb1Hn3Vc8Zf5Gs0Ja"
pk="pkipcemudemo01"

fifo="$(mktemp -u)"
mkfifo "$fifo"
python3 "$here/tuya-cloud-standin.py" --licence "$uuid,$authkey,$pk" >"$fifo" &
standin=$!
trap 'kill $standin 2>/dev/null; wait $standin 2>/dev/null; rm -f "$fifo"' EXIT INT TERM
read -r ready <"$fifo"
field() { python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$ready" "$1"; }
iotdns="$(field 'r["iotdns"]')"
ca="$(field 'r["caFile"]')"
control="$(field 'r["control"]')"
broker="mqtts://$(field 'r["app"]["username"]'):$(field 'r["app"]["password"]')@$(field 'r["mqtt"]')"
turn="$(field 'json.dumps(r["iceToken"])' 2>/dev/null || true)"

cat <<TEXT
Tuya cloud stand-in ready (files in $(field 'r["dir"]')).

1. The device (prints the pairing QR code, then waits for the token):
   $ipcemu run --profile $root/device-profiles/doorbell.yaml --cloud tuya --uuid $uuid \\
     --authkey $authkey --product-key $pk --state-dir $state --iotdns $iotdns --cloud-ca $ca \\
     --control 127.0.0.1:8080
   (the web console at http://127.0.0.1:8080/ shows the same QR code and the join state)

2. "Scan the QR code" (the stand-in pushes the token on d/ai/$uuid):
   curl -s -X POST $control/standin/bind -d '{"uuid":"$uuid"}'

3. The devId and the localKey the cloud gives the app:
   curl -s $control/standin/state

4. Call it as the app (write the devId and localKey into an app profile, security pv2.2):
   $ipcemu app call DEVID --broker '$broker' --ca-file $ca --profile APP.yaml --hangup-after 5

5. Remove it from its home (its next CONNECT gets CONNACK 5; it erases its state and pairs again):
   curl -s -X POST $control/standin/unbind -d '{"uuid":"$uuid"}'

   $ipcemu cloud status --state-dir $state

TURN relay for a 302 offer's token list: $turn
Ctrl-C stops the stand-in.
TEXT
wait $standin
