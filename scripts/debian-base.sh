#!/usr/bin/env bash
# The Debian 12 base root that scripts/check-deb.sh (and scripts/fresh-machine.sh) copy for each
# run: made once with debootstrap --variant=minbase into the machine cache
# ($IPCEMU_DEBOOTSTRAP_CACHE, default /var/cache/ipcemu-debootstrap; scripts/lib/machine-cache.sh),
# never changed afterwards. One maker at a time (flock): scripts/test.sh starts it in the
# background during the build, and check-deb.sh waits for it here if it is still going.
# Prints the cache folder (the root is its `bookworm`) on its last line. Root only.
# Usage: scripts/debian-base.sh   (IPCEMU_DEBIAN_MIRROR: the mirror, default deb.debian.org)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib/machine-cache.sh"
[ "$(id -u)" -eq 0 ] || { echo "debian-base: needs root (debootstrap)" >&2; exit 1; }
cache="$(machine_cache ipcemu-debootstrap IPCEMU_DEBOOTSTRAP_CACHE)" || exit 1
base="$cache/bookworm"
mirror="${IPCEMU_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
mkdir -p "$cache/archives/partial"
exec 9>"$cache/.lock"
flock 9
if [ ! -f "$base/.ipcemu-complete" ]; then
  command -v debootstrap >/dev/null || "$here/install-deps.sh" >&2
  started=$SECONDS
  echo "debian-base: making the Debian 12 base root in $base (once; cached)" >&2
  rm -rf "$base.tmp"
  debootstrap --variant=minbase bookworm "$base.tmp" "$mirror" > "$cache/debootstrap.log" 2>&1 \
    || { tail -20 "$cache/debootstrap.log" >&2; echo "debian-base: debootstrap failed (log: $cache/debootstrap.log)" >&2; exit 1; }
  rm -rf "$base"
  mv "$base.tmp" "$base"
  touch "$base/.ipcemu-complete"
  echo "debian-base: made in $((SECONDS - started)) s" >&2
fi
printf '%s\n' "$cache"
