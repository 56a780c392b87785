#!/usr/bin/env bash
# Where a cold release build of ipcemu spends its time (docs/building.md, issue 22): builds
# `swift build -c release --product ipcemu` in a new scratch folder with every swift-frontend and
# clang job timed (start, end, user + system CPU, module, load average), then prints the CPU per
# module, the module graph's critical path and what the build would take on 2 idle cores
# (scripts/build_profile.py).
# Usage: scripts/build-profile.sh [SCRATCH]   (default /tmp/ipcemu-build-profile; removed first)
# The log stays in SCRATCH-log/ (jobs.log, time.txt); `scripts/build_profile.py SCRATCH-log SCRATCH`
# prints the report again. The manifests are compiled again (the wrapper's environment is part of
# SwiftPM's manifest cache key), so the total wall time is a few seconds above a plain build's.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
scratch="${1:-/tmp/ipcemu-build-profile}"
case "$scratch" in /*) ;; *) scratch="$PWD/$scratch" ;; esac
log="$scratch-log"
bin="$(dirname "$(readlink -f "$(command -v swift)")")"  # the toolchain's usr/bin
rm -rf "$scratch" "$log"
mkdir -p "$log/toolchain/usr/bin"
# The driver finds libSwiftScan next to the frontend it runs: a toolchain-shaped folder whose lib/
# is the real one keeps SwiftPM's dependency scanning as it is without the wrapper.
ln -s "$(dirname "$bin")/lib" "$log/toolchain/usr/lib"
wrapper() { # $1: real tool, $2: kind (swift or c)
  cat <<EOF
#!/usr/bin/env bash
module=""; previous=""
for argument in "\$@"; do
  case "\$previous" in -module-name) module="\$argument" ;; esac
  case "\$argument" in *.build/*.o) [ "$2" = c ] && module="\$(echo "\$argument" | sed -E 's@.*/([^/]+)[.]build/.*@\\1@')" ;; esac
  previous="\$argument"
done
start=\$(date +%s.%N)
times=\$(mktemp "$log/time.XXXXXX")
status=0
/usr/bin/time -f "%U %S" -o "\$times" "$1" "\$@" || status=\$?
echo "\$start \$(date +%s.%N) \$(tail -1 "\$times") $2 \${module:-?} \$(cut -d' ' -f1 /proc/loadavg)" >> "$log/jobs.log"
rm -f "\$times"
exit \$status
EOF
}
wrapper "$bin/swift-frontend" swift > "$log/toolchain/usr/bin/swift-frontend"
wrapper "$bin/clang" c > "$log/clang"
chmod +x "$log/toolchain/usr/bin/swift-frontend" "$log/clang"
echo "build-profile: cold release build in $scratch (load now: $(cut -d' ' -f1-3 /proc/loadavg))"
cd "$root"
SWIFT_DRIVER_SWIFT_FRONTEND_EXEC="$log/toolchain/usr/bin/swift-frontend" CC="$log/clang" \
  /usr/bin/time -f "%e %U %S" -o "$log/time.txt" \
  swift build -c release --product ipcemu --scratch-path "$scratch" > "$log/build.txt" 2>&1 \
  || { tail -20 "$log/build.txt" >&2; exit 1; }
read -r wall user sys < "$log/time.txt"
echo "build-profile: ${wall} s wall, ${user} s user + ${sys} s system (load now: $(cut -d' ' -f1-3 /proc/loadavg))"
python3 "$root/scripts/build_profile.py" "$log" "$scratch"
