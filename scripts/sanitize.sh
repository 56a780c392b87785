#!/usr/bin/env bash
# The suite under ThreadSanitizer and AddressSanitizer (issue 10), each in its own scratch path so
# neither disturbs the normal .build. The C shims are built with UBSan in the same run
# (-fsanitize=undefined through -Xcc). Usage:
#   scripts/sanitize.sh [thread|address|all] [swift test --filter ...]
# Default: all, and the filter below (wire, engine, runtime, transport, link, end to end).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh >/dev/null

which=${1:-all}
shift || true
filter=("$@")
if [[ ${#filter[@]} -eq 0 ]]; then
  filter=(--filter "IPCWireTests|CallEngineTests|CallRuntimeTests|MQTTTransportTests|WebRTCLinkTests|EndToEndTests")
fi

run() {
  local sanitizer=$1 scratch=".build-$1"
  echo "== sanitize=$sanitizer (scratch path $scratch)"
  # GStreamer, GLib and libnice are not instrumented: TSan cannot see their locks, so their own
  # threads' races are suppressed; our Swift and C code is checked in full.
  export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp}"
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0 halt_on_error=1}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1 halt_on_error=1}"
  swift build --build-tests --scratch-path "$scratch" --sanitize="$sanitizer" \
    -Xcc -fsanitize=undefined -Xcc -fno-sanitize-recover=undefined 2>&1 \
    | grep -E "error:|warning: .*(race|sanitizer)" || true
  swift test --skip-build --scratch-path "$scratch" --sanitize="$sanitizer" --no-parallel "${filter[@]}"
}

case "$which" in
  thread|address) run "$which" ;;
  all) run address; run thread ;;
  *) echo "usage: scripts/sanitize.sh [thread|address|all] [swift test filter args]" >&2; exit 2 ;;
esac
