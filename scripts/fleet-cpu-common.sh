# Sourced by scripts/fleet-storm-cpu.sh and scripts/fleet-stop-cpu.sh: starts
# `ipcemu fleet` of $devices doorbells from binary $bin (extra fleet options in "$@") with its
# output in $out, waits until the whole fleet is online, then 2 s more. Sets $pid, and `tree PID`
# lists a process and its descendants.
out="$(mktemp "${TMPDIR:-/tmp}/$(basename "$0" .sh).XXXXXX")"
ulimit -n "$(ulimit -Hn)"
"$bin" fleet --profile "device-profiles/doorbell.yaml:$devices" --answer answer --json --log-level error "$@" > "$out" &
pid=$!
trap 'kill -TERM $pid 2>/dev/null || true' EXIT
until grep -q '"event":"online"' "$out"; do
    kill -0 $pid 2>/dev/null || { echo "the fleet exited"; tail -5 "$out"; exit 1; }
    sleep 0.1
done
sleep 2
tree() { echo "$1"; for child in $(pgrep -P "$1"); do tree "$child"; done; }
