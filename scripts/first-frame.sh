#!/usr/bin/env bash
# Answer -> first frame of `ipcemu app call --video`, each call a fresh process (issue 22), against
# one running `ipcemu run` device. Prints every run's figure and p50/p95 (nearest rank: with 10
# runs, p95 is the slowest).
#
#   scripts/first-frame.sh [--bin PATH] [--runs N] [--broker URL] [--answer POLICY] [--profile FILE]
#
# --bin      the ipcemu to run (default .build/release/ipcemu)
# --runs     calls to make (default 10)
# --broker   a broker where the profile's device already runs (default: start `ipcemu run` here,
#            with its private broker, and stop it at the end)
# --answer   the device's answer policy when this script starts it (default: the profile's, which
#            for device-profiles/doorbell.yaml answers after 1 s of ringing)
# --profile  the device's profile (default device-profiles/doorbell.yaml)
set -euo pipefail
cd "$(dirname "$0")/.."

bin=.build/release/ipcemu
runs=10
broker=""
answer=""
profile=device-profiles/doorbell.yaml
while [ $# -gt 0 ]; do
    case "$1" in
        --bin) bin=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --broker) broker=$2; shift 2 ;;
        --answer) answer=$2; shift 2 ;;
        --profile) profile=$2; shift 2 ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        *) echo "first-frame.sh: unknown argument $1" >&2; exit 64 ;;
    esac
done
[ -x "$bin" ] || { echo "first-frame.sh: no $bin (build it: swift build -c release --product ipcemu)" >&2; exit 66; }
case "$runs" in ''|*[!0-9]*|0) echo "first-frame.sh: --runs must be a positive number" >&2; exit 64 ;; esac

work=$(mktemp -d)
device_pid=""
cleanup() {
    if [ -n "$device_pid" ]; then kill -TERM "$device_pid" 2>/dev/null || true; wait "$device_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

if [ -z "$broker" ]; then
    args=(run --profile "$profile" --log-level warning)
    [ -n "$answer" ] && args+=(--answer "$answer")
    "$bin" "${args[@]}" >"$work/device.log" 2>&1 &
    device_pid=$!
    for _ in $(seq 1 100); do
        broker=$(grep -o 'online at mqtt://[0-9.:]*' "$work/device.log" | head -1 | sed 's/^online at //') || true
        [ -n "$broker" ] && break
        kill -0 "$device_pid" 2>/dev/null || { cat "$work/device.log" >&2; exit 1; }
        sleep 0.1
    done
    [ -n "$broker" ] || { echo "first-frame.sh: the device did not come online" >&2; cat "$work/device.log" >&2; exit 1; }
fi
devid=$(awk '/^[[:space:]]*devId:/ { print $2; exit }' "$profile")

echo "device $devid at $broker; $runs calls, each: $bin app call $devid --broker $broker --profile $profile --video --hangup-after 2"
values=()
for i in $(seq 1 "$runs"); do
    out=$("$bin" app call "$devid" --broker "$broker" --profile "$profile" --video --hangup-after 2 2>&1) || true
    ms=$(printf '%s\n' "$out" | grep '^video summary:' | grep -o 'answer -> first frame [0-9]* ms' | grep -o '[0-9]*' || true)
    ready=$(printf '%s\n' "$out" | grep -o 'link prepared while ringing ([^)]*)\|link not ready at the answer' | head -1 || true)
    if [ -z "$ms" ]; then
        echo "run $i: no frame (output below)"; printf '%s\n' "$out" | tail -5
        continue
    fi
    echo "run $i: answer -> first frame $ms ms${ready:+   [$ready]}"
    values+=("$ms")
done
[ ${#values[@]} -gt 0 ] || { echo "first-frame.sh: no run decoded a frame" >&2; exit 1; }
printf '%s\n' "${values[@]}" | sort -n | awk -v runs="$runs" '
    { v[NR] = $1 }
    END {
        p50 = int((NR * 50 + 99) / 100); p95 = int((NR * 95 + 99) / 100)
        printf "answer -> first frame over %d of %d runs: p50 %d ms, p95 %d ms, min %d ms, max %d ms\n", NR, runs, v[p50], v[p95], v[1], v[NR]
    }'
[ ${#values[@]} -eq "$runs" ] || exit 1
