#!/usr/bin/env bash
# A manual measurement (not CI; issue 22, docs/building.md "A fresh machine"): how long
# `scripts/run-doorbell.sh`'s source build takes from nothing to "is online", as near to a fresh
# machine as one that already has Swift allows. apt runs in a fresh Debian 12 root (scripts/debian-base.sh's
# cached debootstrap base, copied; an empty apt cache, so every package is downloaded) with
# `install-deps.sh --build`; at the same moment a fresh clone of this repository (no .build) starts
# compiling the Swift dependencies on the host, as run-doorbell.sh does; once apt is done, ipcemu
# is built and `ipcemu run` goes until it prints "is online". Prints each step's time from the start.
# Usage: scripts/fresh-machine.sh   (root; the base root is made once by scripts/debian-base.sh)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
base="$("$repo/scripts/debian-base.sh")/bookworm" || exit 1
work="$(mktemp -d /var/tmp/ipcemu-fresh.XXXXXX)"
root="$work/root"
mounted=()
run_pid=""
cleanup() {
  if [ -n "$run_pid" ]; then kill -INT "$run_pid" 2>/dev/null || true; wait "$run_pid" 2>/dev/null || true; fi
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
  if ! grep -q " $work/" /proc/mounts; then rm -rf "$work"; else echo "fresh-machine: left $work (still mounted)" >&2; fi
}
trap cleanup EXIT
mkdir -p "$root"
cp -a "$base/." "$root/"
cat > "$root/etc/apt/sources.list" <<SOURCES
deb ${IPCEMU_DEBIAN_MIRROR:-http://deb.debian.org/debian} bookworm main
deb ${IPCEMU_DEBIAN_MIRROR:-http://deb.debian.org/debian} bookworm-updates main
deb ${IPCEMU_DEBIAN_SECURITY:-http://deb.debian.org/debian-security} bookworm-security main
SOURCES
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
for m in proc dev dev/pts; do mkdir -p "$root/$m"; mount --bind "/$m" "$root/$m"; mounted+=("$root/$m"); done
cp "$repo/scripts/install-deps.sh" "$root/tmp/"
git clone -q "$repo" "$work/clone"
cd "$work/clone"
echo "fresh-machine: load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"
t0=$(date +%s.%N)
at() { awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f s", b - a }'; }
(
  for target in OpenAPIRuntime ArgumentParser Yams Prometheus ServiceLifecycle; do
    [ -e "$work/apt-done" ] && break
    swift build -c release --target "$target" >> "$work/deps.log" 2>&1 || break
    echo "fresh-machine: dependency $target compiled at $(at)"
  done
) &
warm=$!
chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 bash /tmp/install-deps.sh --build \
  > "$work/apt.log" 2>&1 || { tail -20 "$work/apt.log" >&2; echo "fresh-machine: apt failed" >&2; exit 1; }
echo "fresh-machine: apt (install-deps.sh --build, $(grep -c '^Setting up' "$work/apt.log") packages set up) done at $(at)"
touch "$work/apt-done"
wait "$warm" || true
swift build -c release --product ipcemu > "$work/build.log" 2>&1 || { tail -20 "$work/build.log" >&2; exit 1; }
echo "fresh-machine: ipcemu built at $(at)"
.build/release/ipcemu run --profile device-profiles/doorbell.yaml > "$work/run.log" 2>&1 &
run_pid=$!
for _ in $(seq 1 600); do grep -q "is online" "$work/run.log" && break; sleep 0.1; done
grep -q "is online" "$work/run.log" || { cat "$work/run.log" >&2; echo "fresh-machine: never online" >&2; exit 1; }
echo "fresh-machine: online at $(at)"
