#!/usr/bin/env bash
# A manual run (not CI): 100,000 fleet devices on private brokers on this host (docs/fleet.md
# "100,000 devices on one host"). Starts `ipcemu fleet` (private mosquittos as the descriptor
# limit needs, worker processes as it needs), then prints: the fleet's online line (time, RSS per
# device summed over its processes), a reconnect storm (SIGUSR1; each process's "back online"
# note), and SIGTERM -> all offline (the stopped line) and the exit.
# Usage: scripts/fleet-100k.sh [IPCEMU_BINARY] [DEVICES] [FLEET OPTIONS...]
#        (default .build-fleet/release/ipcemu 100000; options go to `ipcemu fleet`, e.g. --connect-window 128)
set -euo pipefail
bin="${1:-.build-fleet/release/ipcemu}"
devices="${2:-100000}"
shift $(( $# < 2 ? $# : 2 ))
out="$(mktemp "${TMPDIR:-/tmp}/fleet-100k.XXXXXX")"
ulimit -n "$(ulimit -Hn)"
start=$(date +%s.%N)
"$bin" fleet --profile "device-profiles/doorbell.yaml:$devices" --answer answer --json --log-level error "$@" > "$out" &
pid=$!
trap 'kill -TERM $pid 2>/dev/null || true' EXIT
wait_for() {  # wait_for PATTERN COUNT TIMEOUT
  local deadline=$(( $(date +%s) + $3 ))
  while [ "$(grep -c -- "$1" "$out" || true)" -lt "$2" ]; do
    [ "$(date +%s)" -lt "$deadline" ] || { echo "timed out waiting for $1"; tail -5 "$out"; return 1; }
    kill -0 $pid 2>/dev/null || { echo "the fleet exited"; tail -5 "$out"; return 1; }
    sleep 0.05
  done
}
wait_for '"event":"online"' 1 300
echo "online after $(echo "$(date +%s.%N) - $start" | bc) s from spawn:"
grep '"event":"online"' "$out"
grep '"message"' "$out" | grep -v progress | head -5
processes=$(grep -o '"processes":[0-9]*' "$out" | head -1 | cut -d: -f2)
sleep 2
storm=$(date +%s.%N)
kill -USR1 $pid
wait_for 'reconnect storm: .* back online' "$processes" 300
echo "storm: every process back online $(echo "$(date +%s.%N) - $storm" | bc) s after SIGUSR1:"
grep 'reconnect storm: .* back online' "$out"
sleep 2
stop=$(date +%s.%N)
kill -TERM $pid
status=0; wait $pid || status=$?
trap - EXIT
echo "SIGTERM -> exited (status $status) in $(echo "$(date +%s.%N) - $stop" | bc) s:"
grep '"event":"stopped"' "$out"
echo "output: $out"
