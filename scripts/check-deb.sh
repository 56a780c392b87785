#!/usr/bin/env bash
# Proves the Debian package on a machine without Swift (issue 22): a fresh Debian 12 root made with
# debootstrap (cached outside git, in $IPCEMU_DEBOOTSTRAP_CACHE, default /var/cache/ipcemu-debootstrap
# (scripts/lib/machine-cache.sh), with apt's downloaded packages), in which
#   1. `apt-get install ./ipcemu_*.deb mosquitto` resolves every dependency (mosquitto is only
#      recommended: the check runs the private broker, so it asks for it),
#   2. `ldd /usr/bin/ipcemu` finds every library and no Swift library (the runtime is linked in),
#   3. the installed `ipcemu run` (private broker, test-pattern camera) comes online, and
#   4. the host's `ipcemu app call --video` calls it over loopback (shared by the chroot and the
#      host): the call is answered, frames are decoded and every stamp is read.
# Usage: scripts/check-deb.sh [DEB]   (default: the newest dist/ipcemu_*.deb; IPCEMU_APP_BIN: the
# host's ipcemu, default .build/debug/ipcemu, else .build-release/release/ipcemu). Root only.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
started=$SECONDS
say() { echo "check-deb: $* ($((SECONDS - started)) s)"; }
deb="${1:-$(ls -t dist/ipcemu_*.deb 2>/dev/null | head -1)}"
[ -f "$deb" ] || { echo "check-deb: no .deb (scripts/package-deb.sh first)" >&2; exit 1; }
app="${IPCEMU_APP_BIN:-}"
if [ -z "$app" ]; then
  for candidate in .build/debug/ipcemu .build-release/release/ipcemu; do
    [ -x "$candidate" ] && { app="$candidate"; break; }
  done
fi
[ -x "$app" ] || { echo "check-deb: no host ipcemu to call with (swift build first)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "check-deb: needs root (debootstrap, chroot, mounts)" >&2; exit 1; }

say "the Debian 12 base root (made once, cached)"
cache="$(scripts/debian-base.sh)" || exit 1
base="$cache/bookworm"
mirror="${IPCEMU_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
security="${IPCEMU_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}"
# The base root is never changed: each run works on a copy.
chroot_dir="$(mktemp -d /var/tmp/ipcemu-chroot.XXXXXX)"
run_pid=""
mounted=()
cleanup() {
  if [ -n "$run_pid" ]; then kill -TERM "$run_pid" 2>/dev/null || true; wait "$run_pid" 2>/dev/null || true; fi
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
  # Only a root with nothing mounted in it is removed.
  if ! grep -q " $chroot_dir/" /proc/mounts; then rm -rf "$chroot_dir"; else echo "check-deb: left $chroot_dir (still mounted)" >&2; fi
}
trap cleanup EXIT
cp -a "$base/." "$chroot_dir/"
cat > "$chroot_dir/etc/apt/sources.list" <<SOURCES
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $security bookworm-security main
SOURCES
cp /etc/resolv.conf "$chroot_dir/etc/resolv.conf" 2>/dev/null || true
bind() { mkdir -p "$chroot_dir$2"; mount "${@:3}" "$1" "$chroot_dir$2"; mounted+=("$chroot_dir$2"); }
bind /proc /proc --bind
bind /dev /dev --bind
bind /dev/pts /dev/pts --bind
bind /dev/shm /dev/shm --bind
bind "$cache/archives" /var/cache/apt/archives --bind
cp "$deb" "$chroot_dir/tmp/ipcemu.deb"
say "base root copied; apt-get update"
in_root() { chroot "$chroot_dir" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
in_root apt-get update -qq
say "apt-get install ./ipcemu.deb mosquitto"
if ! in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends /tmp/ipcemu.deb mosquitto \
    > "$chroot_dir/tmp/apt.log" 2>&1; then
  tail -30 "$chroot_dir/tmp/apt.log" >&2
  echo "check-deb: apt-get install ./ipcemu.deb did not resolve" >&2
  exit 1
fi
say "installed ($(grep -c '^Setting up' "$chroot_dir/tmp/apt.log") packages set up)"
in_root dpkg -s ipcemu | grep -E "^(Version|Depends|Recommends):"
if in_root sh -c 'command -v swift swiftc' >/dev/null 2>&1 || [ -e "$chroot_dir/usr/lib/swift" ]; then
  echo "check-deb: the root has Swift; the check needs a machine without it" >&2; exit 1
fi
libs="$(in_root ldd /usr/bin/ipcemu)"
if grep -q "not found" <<<"$libs"; then
  grep "not found" <<<"$libs" >&2; echo "check-deb: libraries missing in the root (above)" >&2; exit 1
fi
if grep -Ei "swift|libFoundation|libdispatch|BlocksRuntime" <<<"$libs" >&2; then
  echo "check-deb: the installed binary loads Swift libraries (above)" >&2; exit 1
fi
say "ldd: $(wc -l <<<"$libs") libraries, all found, none of Swift"
# The man pages came with it (one per command).
man_pages="$(ls "$chroot_dir/usr/share/man/man1" | grep -c '^ipcemu.*\.1\.gz$' || true)"
[ "$man_pages" -gt 0 ] && [ -s "$chroot_dir/usr/share/man/man1/ipcemu.run.1.gz" ] \
  || { echo "check-deb: the package installed no man pages" >&2; exit 1; }
say "man pages: $man_pages (ipcemu.1.gz, ipcemu.run.1.gz, ...)"

# The installed daemon, as root in the root: private broker, test-pattern camera.
log="$chroot_dir/tmp/run.log"
chroot "$chroot_dir" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
  /usr/bin/ipcemu run --profile /usr/share/ipcemu/device-profiles/doorbell.yaml > "$log" 2>&1 &
run_pid=$!
call_line=""
for _ in $(seq 1 600); do
  call_line="$(grep -m1 "Call it:" "$log" || true)"
  [ -n "$call_line" ] && break
  kill -0 "$run_pid" 2>/dev/null || { cat "$log" >&2; echo "check-deb: ipcemu run exited" >&2; exit 1; }
  sleep 0.1
done
[ -n "$call_line" ] || { cat "$log" >&2; echo "check-deb: the device did not come online in 60 s" >&2; exit 1; }
broker="$(sed -n 's/.*--broker \([^ ]*\).*/\1/p' <<<"$call_line")"
devid="$(sed -n 's/.* app call \([^ ]*\) .*/\1/p' <<<"$call_line")"
say "the installed ipcemu is online: $devid at $broker"
out="$("$app" app call "$devid" --broker "$broker" --profile device-profiles/doorbell.yaml --video --hangup-after 3 2>&1)" || {
  echo "$out" >&2; echo "--- device log:" >&2; cat "$log" >&2; echo "check-deb: the call failed" >&2; exit 1
}
summary="$(grep -m1 "video summary:" <<<"$out" || true)"
frames="$(sed -n 's/.*video summary: \([0-9]*\) frames.*/\1/p' <<<"$summary")"
stamps="$(sed -n 's/.* \([0-9]*\) stamps read.*/\1/p' <<<"$summary")"
if [ -z "$frames" ] || [ "$frames" -lt 10 ] || [ -z "$stamps" ] || [ "$stamps" -lt 10 ]; then
  echo "$out" >&2; echo "check-deb: no video from the installed device (frames '${frames:-none}', stamps '${stamps:-none}')" >&2; exit 1
fi
say "call answered; $summary"
kill -TERM "$run_pid"
wait "$run_pid" && rc=0 || rc=$?
run_pid=""
[ "$rc" -eq 0 ] || { cat "$log" >&2; echo "check-deb: the installed ipcemu exited $rc on SIGTERM" >&2; exit 1; }
say "passed: $(basename "$deb") ($(du -h "$deb" | cut -f1)) installs and works on Debian 12 without Swift"
