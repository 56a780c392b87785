#!/usr/bin/env bash
# Installs the Debian packages ipcemu needs to build, run and test. Idempotent: packages already
# present are skipped, so running it again costs a few seconds.
# Usage: scripts/install-deps.sh           everything (build, run, the whole test suite)
#        scripts/install-deps.sh --build   only what building and running ipcemu needs
#                                          (scripts/run-doorbell.sh: no qemu, Chromium, Xvfb, ...)
set -euo pipefail

BUILD_PACKAGES=(
  # MQTT: the broker the tests and `ipcemu run` start, and the client library
  mosquitto libmosquitto-dev
  # TLS tests: the private broker's throwaway CA is made with the openssl command; AES, HMAC and
  # MD5 of the wire and the cloud join come from the system's libcrypto (CWireCrypto)
  openssl libssl-dev
  # HTTP(S) of the cloud join, the pushes and the CLI's control client: the system's libcurl (HTTPTransfer)
  libcurl4-openssl-dev
  # The control API's HTTP server, its event stream and the web console: GNU libmicrohttpd (HTTPServe)
  libmicrohttpd-dev
  # WebRTC and media: webrtcbin, x264, decoders, ICE
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev libgstreamer-plugins-bad1.0-dev
  gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad
  gstreamer1.0-plugins-ugly gstreamer1.0-libav gstreamer1.0-nice gstreamer1.0-tools
  # WebRTCLink: libnice's headers (the shim adds loopback host candidates through the agent)
  libnice-dev
  # Camera: libv4l2
  libv4l-dev
  # The device's screen and sound (profile `display` and `audio`): ximagesink / kmssink, alsasrc /
  # alsasink
  gstreamer1.0-x gstreamer1.0-alsa
  # The Tuya cloud join (PROTOCOL.md 9): the pairing QR code in the terminal (libqrencode)
  libqrencode-dev
)

TEST_PACKAGES=(
  # The vivid integration test: a kernel booted under qemu with a busybox initramfs
  qemu-system-x86 busybox-static cpio
  # The web console test (and docs/console.png): headless Chromium driven over DevTools
  chromium
  # The screen and sound tests run a window under Xvfb and read a screenshot (xwd), and ALSA
  # through its null and file PCMs (alsa-utils: aplay/arecord -L for the names `ipcemu cameras` lists)
  alsa-utils xvfb x11-apps
  # The local stand-in for Tuya's cloud (scripts/tuya-cloud-standin.py: AES through
  # python3-cryptography, a TURN relay from coturn)
  python3-cryptography coturn
  # The Debian package (scripts/package-deb.sh, dpkg-shlibdeps) and its check in a fresh Debian 12
  # root (scripts/check-deb.sh)
  dpkg-dev debootstrap
)

case "${1:-}" in
  --build) PACKAGES=("${BUILD_PACKAGES[@]}") ;;
  "") PACKAGES=("${BUILD_PACKAGES[@]}" "${TEST_PACKAGES[@]}") ;;
  *) echo "usage: scripts/install-deps.sh [--build]" >&2; exit 2 ;;
esac

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} Debian packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
