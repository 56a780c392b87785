#!/usr/bin/env bash
# The whole test suite: installs what is missing (idempotent), builds warning-checked, runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step's wall time, printed as it ends, so a slow CI run says where its time went.
started=$SECONDS; step_started=$SECONDS
step_done() { echo "test.sh: $1 took $((SECONDS - step_started)) s ($((SECONDS - started)) s in all)"; step_started=$SECONDS; }
scripts/install-deps.sh
step_done "installing dependencies"
# Warnings in dependencies' sources and in generated code (swift-openapi-generator's output,
# committed in Sources/ControlAPISpec/Generated) are not ours; every other warning fails the run.
not_ours="/.build/(checkouts|plugins/outputs)/|/Sources/ControlAPISpec/Generated/"
# What a first run on a machine downloads and unpacks once (the vivid test's kernel, the package
# check's Debian root: machine caches, docs/building.md) is made beside the build, which leaves
# the network and much of the disk idle; the tests start only once both are done, so nothing runs
# beside the timing-sensitive tests. On a machine that has them this takes a second.
prepare_log=/tmp/ipcemu-prepare.log
: > "$prepare_log"
prepare_pids=()
scripts/vivid/prepare.sh >> "$prepare_log" 2>&1 & prepare_pids+=($!)
if [[ -z "${IPCEMU_SKIP_DEB:-}" && $(id -u) -eq 0 ]]; then
  scripts/debian-base.sh >> "$prepare_log" 2>&1 & prepare_pids+=($!)
fi
swift build --build-tests 2>&1 | tee /tmp/ipcemu-build.log | grep -E "warning:|error:" | grep -Ev "$not_ours" || true
if grep -E "^/.*(warning|error):" /tmp/ipcemu-build.log | grep -Eqv "$not_ours"; then
  echo "test.sh: the build has warnings or errors of our own (see above)" >&2
  exit 1
fi
step_done "the build"
# A preparation that failed is not fatal here: the test or check that needs it makes it again and
# says why it cannot.
for pid in "${prepare_pids[@]}"; do wait "$pid" || echo "test.sh: a machine cache was not prepared (see $prepare_log; it is made again where needed)" >&2; done
step_done "the machine caches (beside the build)"
# The builds the later steps need are made beside the serial tests, at idle CPU priority
# (SCHED_IDLE): the release binary and the man-page tool (the package and the simulation), the
# OpenAPI generator and the fuzz targets. The tests mostly wait on sockets, timers and child
# processes; an idle-priority task gets only the CPU they leave and gives it up the moment a test's
# thread wakes. Each later step then finds its build made (a no-op); a build that failed here is
# made again by its step, which shows the error. On a machine that has them they take seconds.
fuzz_targets=${FUZZ_SMOKE_TARGETS:-"wire sdp profile engine cloud"}
fuzz_smoke=0
if [[ ${FUZZ_SMOKE_SECONDS:-20} -gt 0 ]] && scripts/fuzz.sh supported; then fuzz_smoke=1; fi
later_log=/tmp/ipcemu-later-builds.log
# A process group of its own (setsid), so a run that stops early (a failed test) stops it too.
setsid chrt --idle 0 bash -c 'rc=0
  scripts/package-deb.sh --build-only || rc=1
  scripts/generate-openapi.sh --build-only || rc=1
  if [[ $1 -eq 1 ]]; then scripts/fuzz.sh build "$2" || rc=1; fi
  exit $rc' later-builds "$fuzz_smoke" "$fuzz_targets" > "$later_log" 2>&1 &
later_pid=$!
trap 'kill -- "-$later_pid" 2>/dev/null || true' EXIT
# Serial: two cores give Swift two cooperative threads; tests that wait on child processes
# (qemu, the CLI) must not starve the timing-sensitive end-to-end tests.
swift test --skip-build --no-parallel "$@"
step_done "the Swift tests"
scripts/check-openapi.sh   # schemathesis against the live control API (docs/control.md)
step_done "schemathesis"
wait "$later_pid" || echo "test.sh: a build beside the tests failed (see $later_log); its step makes it again" >&2
step_done "the rest of the builds beside the tests"
# The committed OpenAPI code (Sources/ControlAPISpec/Generated) is what the pinned generator makes
# of openapi.yaml now (docs/building.md).
scripts/generate-openapi.sh --check
step_done "the generated OpenAPI code check"
# One release build serves the package and the simulation (.build-release, the Swift runtime linked
# in; a second release build would cost CI several minutes), made beside the tests (above).
# The Debian package (issue 22, docs/building.md): installed with apt-get in a fresh Debian 12 root
# (cached debootstrap) and called from here over loopback. IPCEMU_SKIP_DEB=1 skips the package.
if [[ -z "${IPCEMU_SKIP_DEB:-}" ]]; then
  scripts/package-deb.sh
  step_done "the Debian package"
else
  scripts/package-deb.sh --build-only
  step_done "the release build"
fi
# The deterministic simulation (issue 23, docs/simulation.md): 100,000 calls on a fixed seed, then
# 100,000 on a fresh seed (printed: replay a failure with it). Each prints its calls per second,
# the faults injected and 0 violations; a violation fails the run. Both split into shards on every
# core (--jobs); the fixed seed names its jobs count, so it is the same run on any machine.
.build-release/release/ipcemu simulate --seed 23 --calls 100000 --devices 100 --users 300 --faults all --jobs 2
.build-release/release/ipcemu simulate --calls 100000 --devices 100 --users 300 --faults all
step_done "the simulation (2 x 100,000 calls)"
if [[ -z "${IPCEMU_SKIP_DEB:-}" ]]; then
  scripts/check-deb.sh
  step_done "the Debian package check"
fi
# Fuzz smoke (issue 10): the wire, SDP, profile, engine and cloud (issue 21) targets FUZZ_SMOKE_SECONDS (default 20)
# each from their committed seeds, built in .build-fuzz, when the toolchain has libFuzzer;
# FUZZ_SMOKE_SECONDS=0 skips it. The control-body target runs in scripts/fuzz.sh's long runs.
if [[ $fuzz_smoke -eq 1 ]]; then
  FUZZ_SMOKE_TARGETS=$fuzz_targets scripts/fuzz.sh smoke "${FUZZ_SMOKE_SECONDS:-20}"
  step_done "the fuzz smoke"
fi
# The testing library as other projects use it: the pytest fixtures installed with pip, and a
# package outside the repo resolving ipcemu by a file:// URL and version tag.
scripts/test-python.sh
step_done "the pytest fixtures"
scripts/check-consumer.sh
step_done "the consumer package check"
