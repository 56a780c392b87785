#!/usr/bin/env bash
# The main job in one step: install what is missing, build, and run a virtual video doorbell on a
# private (embedded) mosquitto broker with the stamped test-pattern camera. It prints the broker URL
# and the exact `ipcemu app call` command that calls it. Ctrl-C hangs up and exits.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
echo "run-doorbell: building ipcemu (release; the first build takes a few minutes)"
log=$(mktemp -t ipcemu-build.XXXXXX)
if ! swift build -c release --product ipcemu > "$log" 2>&1; then
  tail -40 "$log" >&2
  echo "run-doorbell: the build failed (full log: $log)" >&2
  exit 1
fi
rm -f "$log"
exec .build/release/ipcemu run --profile device-profiles/doorbell.yaml "$@"
