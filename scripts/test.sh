#!/usr/bin/env bash
# The whole test suite: installs what is missing (idempotent), builds warning-checked, runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build --build-tests 2>&1 | tee /tmp/ipcemu-build.log | grep -E "warning:|error:" | grep -v "/.build/checkouts/" || true
if grep -E "^/.*(warning|error):" /tmp/ipcemu-build.log | grep -qv "/.build/checkouts/"; then
  echo "test.sh: the build has warnings or errors of our own (see above)" >&2
  exit 1
fi
# Serial: two cores give Swift two cooperative threads; tests that wait on child processes
# (qemu, the CLI) must not starve the timing-sensitive end-to-end tests.
swift test --skip-build --no-parallel "$@"
scripts/check-openapi.sh   # schemathesis against the live control API (docs/control.md)
# The testing library as other projects use it: the pytest fixtures installed with pip, and a
# package outside the repo resolving ipcemu by a file:// URL and version tag.
scripts/test-python.sh
scripts/check-consumer.sh
