#!/usr/bin/env bash
# A manual run (not CI): what one device's clean stop costs (SIGTERM: its calls ended, its retained
# offline status published and acknowledged, DISCONNECT), measured so that two builds compare on a
# shared machine (docs/fleet.md "100,000 devices on one host"), like scripts/fleet-storm-cpu.sh
# does for a reconnect storm. Starts `ipcemu fleet` on private brokers, waits for the online line,
# sends SIGTERM and prints: the fleet's own `stopped` time (every device offline), the time to the
# exit, and the CPU time (user + system) of the fleet's processes and their mosquittos over the
# stop, per device. The processes are gone after the stop, so their CPU is read from this shell's
# reaped children (cutime + cstime: every process of the tree is reaped by its parent) minus what
# the tree had used before the signal (its own and its reaped children's).
# Usage: scripts/fleet-stop-cpu.sh IPCEMU_BINARY [DEVICES] [FLEET OPTIONS...]   (default 20000)
set -uo pipefail
bin="$1"
devices="${2:-20000}"
shift $(( $# < 2 ? $# : 2 ))
source "$(dirname "$0")/fleet-cpu-common.sh"
ticks() {  # utime + stime + cutime + cstime (fields 14-17 of /proc/PID/stat) over the fleet's process tree
    local sum=0 u k cu ck
    for p in $(tree $pid); do
        read -r u k cu ck < <(awk '{print $14, $15, $16, $17}' "/proc/$p/stat" 2>/dev/null) &&
            sum=$((sum + u + k + cu + ck))
    done
    echo $sum
}
reaped() {  # this shell's reaped children: cutime + cstime (fields 16 and 17), read without a fork
    local line
    read -r line < /proc/$$/stat
    line="${line##*) }"   # fields from 3 on
    set -- $line
    echo $(( ${14} + ${15} ))
}
hz=$(getconf CLK_TCK)
processes=$(tree $pid | wc -l)
t0=$(ticks); c0=$(reaped)
start=$(date +%s.%N)
kill -TERM $pid
status=0; wait $pid || status=$?
end=$(date +%s.%N)
trap - EXIT
c1=$(reaped)
used=$(( c1 - c0 - t0 ))
stopped=$(grep -o '"event":"stopped","seconds":[0-9.]*' "$out" | cut -d: -f3)
echo "stop of $devices devices ($processes processes, mosquittos included): all offline ${stopped:-?} s," \
     "exited (status $status) $(echo "$end - $start" | bc) s after SIGTERM; CPU $(echo "scale=2; $used / $hz" | bc) s" \
     "($(echo "scale=1; $used * 1000000 / $hz / $devices" | bc) us per device)"
echo "output: $out"
