#!/usr/bin/env bash
# The main job in one step: install what is missing, build, and run a virtual video doorbell on a
# private (embedded) mosquitto broker with the stamped test-pattern camera. It prints the broker URL
# and the exact `ipcemu app call` command that calls it. Ctrl-C hangs up and exits.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build -c release --product ipcemu 2>&1 | grep -E "error|warning: .*Sources/" || true
exec .build/release/ipcemu run --profile device-profiles/doorbell.yaml "$@"
