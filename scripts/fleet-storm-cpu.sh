#!/usr/bin/env bash
# A manual run (not CI): what one reconnect costs, measured so that two builds compare on a shared
# machine (docs/fleet.md "100,000 devices on one host"). Starts `ipcemu fleet` on private brokers
# like scripts/fleet-100k.sh, waits for the online line, sends SIGUSR1 (a reconnect storm) and
# prints, over the storm: its wall time, the CPU time (user + system) of the fleet's processes and
# their mosquittos per device reconnect, and the kernel's TCP segments sent per reconnect (nstat
# TcpOutSegs: system-wide, so other TCP traffic on the host counts too). The wall time follows the
# machine's load; the CPU time per reconnect much less, which is what an A/B of two builds needs.
# Devices reach private brokers over Unix sockets by default (docs/fleet.md "Devices over Unix
# sockets"): TcpOutSegs then counts only other traffic (about 0 per reconnect); give
# --private-broker-transport tcp to measure the loopback TCP path.
# Usage: scripts/fleet-storm-cpu.sh IPCEMU_BINARY [DEVICES] [FLEET OPTIONS...]   (default 20000)
set -uo pipefail
bin="$1"
devices="${2:-20000}"
shift $(( $# < 2 ? $# : 2 ))
source "$(dirname "$0")/fleet-cpu-common.sh"
processes=$(grep -o '"processes":[0-9]*' "$out" | head -1 | cut -d: -f2)
ticks() {  # utime + stime (fields 14 and 15 of /proc/PID/stat) over the fleet's process tree
    local sum=0 u k
    for p in $(tree $pid); do
        read -r u k < <(awk '{print $14, $15}' "/proc/$p/stat" 2>/dev/null) && sum=$((sum + u + k))
    done
    echo $sum
}
segments() { nstat -az TcpOutSegs | awk '/TcpOutSegs/ {print $2}'; }
hz=$(getconf CLK_TCK)
t0=$(ticks); s0=$(segments); start=$(date +%s.%N)
kill -USR1 $pid
until [ "$(grep -c 'reconnect storm: .* back online' "$out")" -ge "$processes" ]; do
    kill -0 $pid 2>/dev/null || { echo "the fleet exited"; tail -5 "$out"; exit 1; }
    sleep 0.05
done
end=$(date +%s.%N); t1=$(ticks); s1=$(segments)
echo "storm of $devices devices: $(echo "$end - $start" | bc) s; CPU $(echo "scale=2; ($t1 - $t0) / $hz" | bc) s" \
     "($(echo "scale=1; ($t1 - $t0) * 1000000 / $hz / $devices" | bc) us per reconnect);" \
     "TcpOutSegs $((s1 - s0)) ($(echo "scale=1; ($s1 - $s0) / $devices" | bc) per reconnect)"
grep 'reconnect storm: .* back online' "$out"
kill -TERM $pid
wait $pid
trap - EXIT
echo "output: $out"
