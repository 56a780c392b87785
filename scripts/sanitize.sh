#!/usr/bin/env bash
# The suite under ThreadSanitizer and AddressSanitizer (issue 10), each in its own scratch path so
# neither disturbs the normal .build. The C shims are built with UBSan in the same run
# (-fsanitize=undefined through -Xcc). IPCEMU_SANITIZE=1 shrinks the package to the call and media
# stack and its tests (Package.swift, the end): the control plane and its heavy dependencies are not
# built. Usage:
#   scripts/sanitize.sh [thread|address|all] [swift test --filter ...]
# Default: all, and the filter below (wire, engine, runtime, transport, camera, link, device, app,
# end to end).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh >/dev/null

which=${1:-all}
shift || true
filter=("$@")
if [[ ${#filter[@]} -eq 0 ]]; then
  filter=(--filter "IPCWireTests|CallEngineTests|CallRuntimeTests|MQTTTransportTests|CameraTests|WebRTCLinkTests|EmulatorTests|IPCEmuTestingTests|EndToEndTests")
fi

export IPCEMU_SANITIZE=1

run() {
  local sanitizer=$1 scratch=".build-$1"
  echo "== sanitize=$sanitizer (scratch path $scratch)"
  # GStreamer, GLib and libnice are not instrumented: TSan cannot see their locks, so their own
  # threads' races are suppressed; our Swift and C code is checked in full.
  export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp}"
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0 halt_on_error=1}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1 halt_on_error=1}"
  # GLib before 2.76 recycles g_slice blocks (GstBuffer, GstEvent...) through its own magazines,
  # handed between threads under futex locks the sanitizers cannot see: a new GstBuffer's header
  # then looks racy against the block's earlier owner (TSan) or escapes use-after-free checks (ASan).
  # always-malloc makes every such block a malloc/free the sanitizers track (ignored by GLib 2.76+,
  # where g_slice is malloc already).
  export G_SLICE=always-malloc
  local log="$scratch.build.log" started
  started=$(date +%s)
  # The C shims (and the C of our dependencies) with UBSan too; its runtime comes with the TSan or
  # ASan runtime swiftc links. Flags on the command line only: Package.swift has no unsafeFlags.
  if ! swift build --build-tests --scratch-path "$scratch" --sanitize="$sanitizer" \
      -Xcc -fsanitize=undefined -Xcc -fno-sanitize-recover=undefined >"$log" 2>&1; then
    grep -E "error:" "$log" | head -40 >&2
    echo "sanitize.sh: the $sanitizer build failed (see $log)" >&2
    return 1
  fi
  echo "   built in $(( $(date +%s) - started )) s"
  started=$(date +%s)
  local status=0
  # The sanitizer build has no `ipcemu` command (Package.swift, IPCEMU_SANITIZE): the camera
  # tests that run it (`ipcemu snapshot`, and `ipcemu` in the vivid guests) are skipped here.
  swift test --skip-build --scratch-path "$scratch" --sanitize="$sanitizer" --no-parallel "${filter[@]}" \
    --skip "CameraTests.SnapshotTests|CameraTests.Vivid" \
    2>&1 | tee "$scratch.test.log" || status=$?
  echo "   tests ran in $(( $(date +%s) - started )) s (status $status)"
  if grep -qE "^(WARNING: ThreadSanitizer|==[0-9]+==ERROR: AddressSanitizer|.*runtime error:)" "$scratch.test.log"; then
    echo "sanitize.sh: $sanitizer reported findings (see $scratch.test.log)" >&2
    status=1
  fi
  return $status
}

case "$which" in
  thread|address) run "$which" ;;
  all) failed=0; run address || failed=1; run thread || failed=1; exit $failed ;;
  *) echo "usage: scripts/sanitize.sh [thread|address|all] [swift test filter args]" >&2; exit 2 ;;
esac
