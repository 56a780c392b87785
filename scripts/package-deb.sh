#!/usr/bin/env bash
# Builds dist/ipcemu_<version>_<arch>.deb: the release `ipcemu` with the Swift runtime linked in
# (--static-swift-stdlib, scratch path .build-release), the shipped profiles and scenarios under
# /usr/share/ipcemu/, the systemd unit ipcemu@.service (one instance per /etc/ipcemu/NAME.yaml),
# a man page per command (usr/share/man/man1/ipcemu*.1.gz).
# Depends: what dpkg-shlibdeps derives from the binary's libraries (ldd + dpkg -S, with versions)
# plus the Debian packages of the GStreamer elements the code uses; mosquitto is recommended.
# Usage: scripts/package-deb.sh [--no-build | --build-only]   (--no-build: package the binary already
#        built; --build-only: only the builds, the release binary and the man-page tool: CI makes
#        them beside its tests, scripts/test.sh)
# Prints the path of the .deb last. scripts/check-deb.sh installs it in a fresh Debian 12 root.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
# IPCEMU_DEB_SCRATCH: another release scratch folder to build in (CI passes the one its release
# build already filled: --static-swift-stdlib changes only the link).
scratch="$root/${IPCEMU_DEB_SCRATCH:-.build-release}"
mode="${1:-}"
case "$mode" in
  ""|--no-build|--build-only) ;;
  *) echo "package-deb: unknown option '$mode' (expected --no-build or --build-only)" >&2; exit 2 ;;
esac

version="$(sed -n 's/.*static let version = "\([^"]*\)".*/\1/p' Sources/ipcemu/IPCEmu.swift | head -1)"
[ -n "$version" ] || { echo "package-deb: no version in Sources/ipcemu/IPCEmu.swift" >&2; exit 1; }
arch="$(dpkg --print-architecture)"
if [ "$mode" != --no-build ]; then
  echo "package-deb: swift build -c release --product ipcemu --static-swift-stdlib (scratch ${scratch#$root/})"
  started=$SECONDS
  swift build -c release --product ipcemu --static-swift-stdlib --scratch-path "$scratch" 2>&1 | grep -E "error:|Build of product|Build complete" || true
  echo "package-deb: build took $((SECONDS - started)) s"
fi
binary="$scratch/release/ipcemu"
[ -x "$binary" ] || { echo "package-deb: $binary was not built" >&2; exit 1; }
# The man-page tool: swift-argument-parser's generate-manual, built from the package checkout the
# release build already resolved (debug, its own scratch folder; a no-op once built).
parser_checkout="$scratch/checkouts/swift-argument-parser"
[ -d "$parser_checkout" ] || { echo "package-deb: $parser_checkout is missing (resolve the package first)" >&2; exit 1; }
swift build --package-path "$parser_checkout" --product generate-manual --scratch-path "$root/.build-manual" 2>&1 \
  | grep -E "error:" >&2 || true
[ -x "$root/.build-manual/debug/generate-manual" ] || { echo "package-deb: generate-manual was not built" >&2; exit 1; }
[ "$mode" = --build-only ] && { echo "package-deb: built $binary and the man-page tool"; exit 0; }
# Nothing of Swift may be loaded from outside the package.
if ldd "$binary" | grep -E "libswift|libFoundation|libdispatch|libBlocksRuntime|lib_FoundationICU" >&2; then
  echo "package-deb: the binary loads Swift libraries dynamically (see above); build with --static-swift-stdlib" >&2
  exit 1
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/ipcemu-deb.XXXXXX")"
trap 'rm -rf "$work"' EXIT
stage="$work/ipcemu_${version}_${arch}"
install -d "$stage/DEBIAN" "$stage/usr/bin" "$stage/usr/share/ipcemu" "$stage/usr/share/doc/ipcemu" \
  "$stage/lib/systemd/system" "$stage/etc/ipcemu"
# Symbols stay (Swift's backtraces name functions); debug info goes.
objcopy --strip-debug "$binary" "$stage/usr/bin/ipcemu"
chmod 0755 "$stage/usr/bin/ipcemu"
cp -r device-profiles "$stage/usr/share/ipcemu/device-profiles"
cp -r scenarios "$stage/usr/share/ipcemu/scenarios"
install -m 0644 deploy/debian/ipcemu@.service "$stage/lib/systemd/system/ipcemu@.service"
install -m 0644 README.md "$stage/usr/share/doc/ipcemu/README.md"
"$stage/usr/bin/ipcemu" --help > "$stage/usr/share/doc/ipcemu/ipcemu-help.txt" 2>&1 || true
# Man pages, one per command (`man ipcemu`, `man ipcemu.run`, `man ipcemu.app.call` ...): made from
# the binary's own help (--experimental-dump-help) by swift-argument-parser's generate-manual tool
# (built above).
install -d "$stage/usr/share/man/man1"
"$root/.build-manual/debug/generate-manual" "$stage/usr/bin/ipcemu" --multi-page --section 1 \
  --authors "ipcemu developers" --output-directory "$stage/usr/share/man/man1"
[ -s "$stage/usr/share/man/man1/ipcemu.1" ] || { echo "package-deb: no man page was written" >&2; exit 1; }
gzip -9n "$stage"/usr/share/man/man1/*.1
echo "package-deb: $(ls "$stage/usr/share/man/man1" | wc -l) man pages"
cat > "$stage/usr/share/doc/ipcemu/copyright" <<COPY
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: ipcemu
Comment: the Swift runtime, Foundation and the Swift packages ipcemu depends on are linked into
 /usr/bin/ipcemu (Apache-2.0 with Runtime Library Exception, and each package's own licence).
COPY
find "$stage/usr/share" -type f -exec chmod 0644 {} +
find "$stage/usr/share" -type d -exec chmod 0755 {} +

# Libraries the binary links: dpkg-shlibdeps maps each (ldd, dpkg -S) to its package and version.
mkdir -p "$work/shlibs/debian"
printf 'Source: ipcemu\n\nPackage: ipcemu\nArchitecture: any\n' > "$work/shlibs/debian/control"
shlibs="$(cd "$work/shlibs" && dpkg-shlibdeps -O "$stage/usr/bin/ipcemu" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')"
[ -n "$shlibs" ] || { echo "package-deb: dpkg-shlibdeps gave no dependencies" >&2; exit 1; }

# GStreamer elements are plugins loaded at run time, not linked: the package of each element the
# daemon and `ipcemu app` use (webrtcbin, nicesrc, x264enc, avdec_h264, ...). Elements for the
# screen and sound (ximagesink, alsasink) are recommended; ones absent here (v4l2h264enc: a Pi's
# encoder) are picked at run time when present and are not dependencies.
element_package() {
  local file
  file="$(gst-inspect-1.0 "$1" 2>/dev/null | sed -n 's/^ *Filename *//p' | head -1)"
  [ -n "$file" ] || return 0
  file="$(readlink -f "$file")"
  dpkg -S "$file" 2>/dev/null | head -1 | cut -d: -f1 && return 0
  dpkg -S "/usr${file}" 2>/dev/null | head -1 | cut -d: -f1 || true
}
required_elements="appsrc appsink queue tee identity fakesink filesink videotestsrc audiotestsrc videoconvert videoscale
  audioconvert audioresample v4l2src jpegdec jpegenc pngenc pngdec h264parse h265parse x264enc x265enc avdec_h264
  avdec_h265 rtph264pay rtph264depay rtpopuspay rtpopusdepay opusenc opusdec alawenc mp4mux matroskamux webrtcbin
  rtpbin dtlssrtpenc srtpenc nicesrc nicesink voaacenc aacparse"
recommended_elements="ximagesink xvimagesink gdppay gdpdepay fdsink fdsrc alsasrc alsasink"
packages_of() {
  for e in $1; do element_package "$e"; done | sort -u | grep -v '^$' | grep -v -E '^libgstreamer1\.0-0$|^libgstreamer-plugins-(base|bad)1\.0-0$' || true
}
gst_depends="$(packages_of "$required_elements" | paste -sd, | sed 's/,/, /g')"
gst_recommends="$(packages_of "$recommended_elements" | paste -sd, | sed 's/,/, /g')"
depends="$shlibs${gst_depends:+, $gst_depends}"
# gst-launch-1.0 draws a `display: window` in a child process (docs/profiles.md).
recommends="mosquitto, gstreamer1.0-tools${gst_recommends:+, $gst_recommends}"

installed_kb="$(du -sk "$stage" | cut -f1)"
cat > "$stage/DEBIAN/control" <<CONTROL
Package: ipcemu
Version: $version
Architecture: $arch
Maintainer: ipcemu developers <ipcemu@localhost>
Installed-Size: $installed_kb
Depends: $depends
Recommends: $recommends
Section: net
Priority: optional
Description: Tuya-style video doorbell emulator (MQTT call protocol, WebRTC video)
 ipcemu impersonates a Tuya-style "IPC with screen" video doorbell or control panel: it speaks
 the MQTT call protocol, rings, answers, and streams camera video to the app over WebRTC. One
 device per profile runs as the systemd unit ipcemu@NAME (/etc/ipcemu/NAME.yaml); the shipped
 profiles are in /usr/share/ipcemu/device-profiles. The Swift runtime is linked in.
CONTROL
mkdir -p dist
out="dist/ipcemu_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$out" >/dev/null
echo "package-deb: Depends: $depends"
echo "package-deb: Recommends: $recommends"
echo "package-deb: $(du -h "$out" | cut -f1) $out"
echo "$root/$out"
