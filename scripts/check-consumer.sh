#!/usr/bin/env bash
# Checks that another package can use ipcemu as a user's package would: by git URL and version.
# Clones this repository at HEAD into a temporary folder, tags the clone (never this repository),
# copies Examples/DoorbellAppTests next to it with its path dependency replaced by
# `.package(url: "file://CLONE", from: VERSION)`, then builds and runs its tests (Swift Testing and
# XCTest). SwiftPM refuses a versioned dependency with unsafeFlags, so this also proves every C
# target builds through pkg-config. Only committed work is checked (the clone is of HEAD).
#
# IPCEMU_CONSUMER_SCRATCH: build folder (default: a machine-wide cache outside the repository,
# /var/cache/ipcemu-consumer/build, or ~/.cache/ipcemu-consumer/build when that is not writable,
# scripts/lib/machine-cache.sh; set but not writable: an error; kept between runs, CI's fresh
# clones included, so the other packages' checkouts and builds are not redone each time; ipcemu
# itself is always built anew: the clone's folder is new each run).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version="0.1.0"
source "$root/scripts/lib/machine-cache.sh"
scratch="$(machine_cache ipcemu-consumer/build IPCEMU_CONSUMER_SCRATCH)" || exit 1
# One check at a time per build folder (two CI runs may start together).
exec 9>"$scratch/.check-consumer.lock"
command -v flock >/dev/null && flock 9
work="$(mktemp -d "${TMPDIR:-/tmp}/ipcemu-consumer.XXXXXX")"
trap 'rm -rf "$work"' EXIT

head="$(git -C "$root" rev-parse HEAD)"
git clone --quiet --no-checkout "$root" "$work/ipcemu"
git -C "$work/ipcemu" checkout --quiet --detach "$head"
git -C "$work/ipcemu" -c user.name=check -c user.email=check@localhost tag -a "$version" -m "consumer check" "$head"
echo "check-consumer: ipcemu $head tagged $version in $work/ipcemu"

cp -R "$root/Examples/DoorbellAppTests" "$work/DoorbellAppTests"
rm -rf "$work/DoorbellAppTests/.build" "$work/DoorbellAppTests/Package.resolved"
manifest="$work/DoorbellAppTests/Package.swift"
dependency='.package(name: "ipcemu", path: "../..")'
grep -qF "$dependency" "$manifest" || { echo "check-consumer: $manifest no longer has $dependency" >&2; exit 1; }
python3 - "$manifest" "$dependency" "file://$work/ipcemu" "$version" <<'PY'
import sys
path, old, url, version = sys.argv[1:]
text = open(path).read().replace(old, '.package(url: "%s", from: "%s")' % (url, version))
open(path, "w").write(text)
PY
grep -F "file://" "$manifest"

cd "$work/DoorbellAppTests"
# The build folder remembers the earlier clone (another temporary URL): forget ipcemu only, so the
# other dependencies' checkouts and builds are reused.
rm -rf "$scratch/checkouts/ipcemu" "$scratch/repositories/ipcemu-"*
if [ -f "$scratch/workspace-state.json" ]; then
  python3 - "$scratch/workspace-state.json" <<'PY'
import json, sys
path = sys.argv[1]
state = json.load(open(path))
deps = state.get("object", {}).get("dependencies", [])
state["object"]["dependencies"] = [d for d in deps if d.get("packageRef", {}).get("identity") != "ipcemu"]
json.dump(state, open(path, "w"))
PY
fi
swift package --scratch-path "$scratch" resolve
swift build --scratch-path "$scratch" --build-tests 2>&1 | tee "$work/build.log" | grep -E "error:|warning: .*unsafe" || true
if grep -qE "error:" "$work/build.log"; then
  echo "check-consumer: the example package does not build against ipcemu $version" >&2
  exit 1
fi
swift test --scratch-path "$scratch" --skip-build "$@"
