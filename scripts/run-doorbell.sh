#!/usr/bin/env bash
# The main job in one step: run a virtual video doorbell on a private (embedded) mosquitto broker
# with the stamped test-pattern camera. It prints the broker URL and the exact `ipcemu app call`
# command that calls it. Ctrl-C hangs up and exits.
# The fastest way there: a prebuilt package in dist/ (ipcemu_<version>_<arch>.deb, made by
# scripts/package-deb.sh) is installed with apt-get, which brings its runtime libraries; no Swift
# needed. Without one (or with IPCEMU_FROM_SOURCE=1), what is missing is installed and ipcemu is
# built from source (release).
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
arch="$(dpkg --print-architecture 2>/dev/null || true)"
deb="$(ls -t dist/ipcemu_*_"${arch:-none}".deb 2>/dev/null | head -1 || true)"
if [ -n "$deb" ] && [ -z "${IPCEMU_FROM_SOURCE:-}" ]; then
  version="$(dpkg-deb -f "$deb" Version)"
  if [ "$(dpkg-query -W -f='${Status} ${Version}' ipcemu 2>/dev/null || true)" != "install ok installed $version" ]; then
    echo "run-doorbell: installing $deb (apt-get brings GStreamer, libmosquitto, mosquitto, ...)"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq "./$deb"
  fi
  exec /usr/bin/ipcemu run --profile /usr/share/ipcemu/device-profiles/doorbell.yaml "$@"
fi
# apt (downloads, unpacking) and the compile of the Swift packages ipcemu depends on (the OpenAPI
# runtime, ArgumentParser, Yams, ...), which need nothing from apt, run at
# the same time; ipcemu's own modules, which need the -dev packages, build once apt is done. Only
# what building and running needs is installed (`--build`: no qemu, Chromium, Xvfb, ...; the test
# command installs those).
deps_log=$(mktemp -t ipcemu-deps.XXXXXX)
apt_done="$deps_log.apt-done"
(
  for target in OpenAPIRuntime ArgumentParser Yams Prometheus ServiceLifecycle; do
    [ -e "$apt_done" ] && break
    swift build -c release --target "$target" >> "$deps_log" 2>&1 || break
  done
) &
warm=$!
if ! scripts/install-deps.sh --build; then
  kill "$warm" 2>/dev/null || true
  wait "$warm" 2>/dev/null || true
  exit 1
fi
touch "$apt_done"
wait "$warm" || true
rm -f "$deps_log" "$apt_done"
echo "run-doorbell: building ipcemu (release; the first build takes a few minutes)"
log=$(mktemp -t ipcemu-build.XXXXXX)
if ! swift build -c release --product ipcemu > "$log" 2>&1; then
  tail -40 "$log" >&2
  echo "run-doorbell: the build failed (full log: $log)" >&2
  exit 1
fi
rm -f "$log"
exec .build/release/ipcemu run --profile device-profiles/doorbell.yaml "$@"
