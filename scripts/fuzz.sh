#!/usr/bin/env bash
# libFuzzer targets (docs/robustness.md). Usage:
#   scripts/fuzz.sh TARGET SECONDS      one target (wire, sdp, profile, engine, cloud, control)
#   scripts/fuzz.sh all SECONDS         every target, one after the other, SECONDS each
#   scripts/fuzz.sh build [TARGET]      only build
#   scripts/fuzz.sh supported           exit 0 if this toolchain links a -sanitize=fuzzer program
#   scripts/fuzz.sh smoke SECONDS       CI: build every target (or FUZZ_SMOKE_TARGETS), run each SECONDS from the seeds
# Fuzz executables are built with IPCEMU_FUZZ=1 into their own scratch path (.build-fuzz) with
# -sanitize=fuzzer (add address with FUZZ_SANITIZE=fuzzer,address); the normal build never sees them.
# The committed seeds (Fuzz/corpus/TARGET) are read; what the fuzzer finds goes to
# .build-fuzz/corpus/TARGET; a crash is written to .build-fuzz/crashes/ and fails the run.
# FUZZ_NO_BUILD=1 runs an already built target without touching the build.
set -euo pipefail
cd "$(dirname "$0")/.."

ALL=(wire sdp profile engine cloud control)
SANITIZE=${FUZZ_SANITIZE:-fuzzer}
SCRATCH=${FUZZ_SCRATCH:-.build-fuzz}
JOBS_FLAG=${FUZZ_BUILD_JOBS:+-j $FUZZ_BUILD_JOBS}

product() {
  case "$1" in
    wire) echo FuzzWire ;;
    sdp) echo FuzzSDP ;;
    profile) echo FuzzProfile ;;
    engine) echo FuzzCallEngine ;;
    cloud) echo FuzzCloud ;;
    control) echo FuzzControlBody ;;
    *) echo "fuzz.sh: unknown target '$1' (expected one of: ${ALL[*]}, all)" >&2; exit 2 ;;
  esac
}

# The control API's generated code is committed (Sources/ControlAPISpec/Generated, made by
# scripts/generate-openapi.sh): the control target builds it like any other source.
generate_control_spec() { :; }

build() {
  local p
  p=$(product "$1")
  # FUZZ_NO_BUILD=1: run the binary already built (another build may hold the scratch path).
  if [[ -n "${FUZZ_NO_BUILD:-}" && -x "$SCRATCH/debug/$p" ]]; then echo "$SCRATCH/debug/$p"; return; fi
  # shellcheck disable=SC2086
  local control=0
  if [[ "$1" == control ]]; then
    control=1
    generate_control_spec
  fi
  IPCEMU_FUZZ=1 IPCEMU_FUZZ_CONTROL=$control swift build --scratch-path "$SCRATCH" --product "$p" $JOBS_FLAG \
    -Xswiftc "-sanitize=$SANITIZE" -Xswiftc -use-ld=lld >&2
  echo "$SCRATCH/debug/$p"
}

run() {
  local target=$1 seconds=$2 bin log dict=() seed=()
  bin=$(build "$target")
  mkdir -p "$SCRATCH/corpus/$target" "$SCRATCH/crashes"
  [[ -f "Fuzz/dict/$target.dict" ]] && dict=("-dict=Fuzz/dict/$target.dict")
  [[ -n "${FUZZ_SEED:-}" ]] && seed=("-seed=$FUZZ_SEED")
  log="$SCRATCH/fuzz-$target.log"
  local started status=0
  started=$(date +%s)
  "$bin" "$SCRATCH/corpus/$target" "Fuzz/corpus/$target" "${dict[@]}" "${seed[@]}" \
    -max_total_time="$seconds" -max_len="${FUZZ_MAX_LEN:-8192}" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$SCRATCH/crashes/$target-" -print_final_stats=1 2>"$log" || status=$?
  local execs minutes
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  minutes=$(awk "BEGIN { printf \"%.1f\", ($(date +%s) - $started) / 60 }")
  if [[ $status -ne 0 ]]; then
    tail -40 "$log" >&2
    echo "fuzz $target: CRASH after $execs executions ($minutes min); see $SCRATCH/crashes/ and $log"
    return 1
  fi
  echo "fuzz $target: $execs executions in $minutes min, 0 crashes (corpus $(ls "$SCRATCH/corpus/$target" | wc -l) inputs)"
}

# A one-file libFuzzer program: does this toolchain have the fuzzer runtime (Linux swift.org
# toolchains do; some distributions' do not)?
supported() {
  local dir status=0
  dir=$(mktemp -d)
  cat >"$dir/probe.swift" <<'SWIFT'
@_cdecl("LLVMFuzzerTestOneInput") public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { 0 }
SWIFT
  swiftc -parse-as-library -sanitize=fuzzer -use-ld=lld "$dir/probe.swift" -o "$dir/probe" >/dev/null 2>&1 \
    && "$dir/probe" -runs=1 >/dev/null 2>&1 || status=1
  rm -rf "$dir"
  return $status
}

case "${1:-}" in
  supported)
    supported ;;
  smoke)
    # Builds first (its time reported apart), then SECONDS per target; any crash fails.
    # The smoke is a regression check from the committed seeds with a fixed fuzzer seed
    # (FUZZ_SEED, default 1), so a CI run does not hinge on a random walk; the long runs
    # (`scripts/fuzz.sh TARGET SECONDS`) take a fresh random seed each time and explore.
    seconds=${2:?usage: fuzz.sh smoke SECONDS}
    export FUZZ_SEED=${FUZZ_SEED:-1}
    # FUZZ_SMOKE_TARGETS narrows it (CI leaves out `control`: its build is the whole HTTP stack
    # again under the fuzzer's flags; the long runs cover it).
    read -r -a targets <<<"${FUZZ_SMOKE_TARGETS:-${ALL[*]}}"
    started=$(date +%s)
    for t in "${targets[@]}"; do build "$t" >/dev/null; done
    echo "fuzz smoke: targets built in $(( $(date +%s) - started )) s"
    # The runs go FUZZ_SMOKE_JOBS at a time (default: one per core): each fuzzer is one
    # single-threaded process, so on an otherwise idle machine each still has a core to itself
    # and makes as many executions in its SECONDS as it would alone.
    jobs=${FUZZ_SMOKE_JOBS:-$(nproc)}
    failed=0
    declare -A running=()
    for t in "${targets[@]}"; do
      while (( ${#running[@]} >= jobs )); do
        if ! wait -n -p done_pid; then failed=1; fi
        unset "running[$done_pid]"
      done
      FUZZ_NO_BUILD=1 run "$t" "$seconds" &
      running[$!]=$t
    done
    for pid in "${!running[@]}"; do wait "$pid" || failed=1; done
    echo "fuzz smoke: $(( $(date +%s) - started )) s in all"
    exit $failed ;;
  all)
    seconds=${2:?usage: fuzz.sh all SECONDS}
    failed=0
    for t in "${ALL[@]}"; do run "$t" "$seconds" || failed=1; done
    exit $failed ;;
  build)
    for t in ${2:-${ALL[@]}}; do build "$t" >/dev/null; done ;;
  "")
    sed -n '2,9p' "$0"; exit 2 ;;
  *)
    run "$1" "${2:?usage: fuzz.sh TARGET SECONDS}" ;;
esac
