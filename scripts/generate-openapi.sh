#!/usr/bin/env bash
# The control API's generated code (docs/control.md, docs/building.md): swift-openapi-generator's
# documented alternative to its build plugin. Its CLI, pinned to one version, is built in a package
# of its own outside the repository (a machine-wide cache, like the vivid kernel's: a fresh clone,
# CI's, does not rebuild the generator each time) and run on Sources/ControlAPISpec/openapi.yaml
# with openapi-generator-config.yaml; the output is committed in Sources/ControlAPISpec/Generated,
# so a build of ipcemu never compiles the generator (OpenAPIKit and its dependencies).
#   IPCEMU_OPENAPI_CACHE=/some/dir   where the generator's package and build live (default
#                                    /var/cache/ipcemu-openapi, or ~/.cache/ipcemu-openapi when
#                                    that is not writable; scripts/lib/machine-cache.sh); one folder
#                                    per generator version. Set but not writable: an error.
# Usage: scripts/generate-openapi.sh          regenerate after changing openapi.yaml or the config
#        scripts/generate-openapi.sh --check  fail (exit 1) if the committed code is not what the
#                                             generator makes now (CI: scripts/test.sh)
#        scripts/generate-openapi.sh --build-only  only build the generator's CLI (CI, beside its tests)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
GENERATOR_VERSION=1.14.3
spec=Sources/ControlAPISpec
committed="$spec/Generated"
source scripts/lib/machine-cache.sh
cache="$(machine_cache ipcemu-openapi IPCEMU_OPENAPI_CACHE)" || exit 1
tool="$cache/tool-$GENERATOR_VERSION"
mkdir -p "$tool/Sources/placeholder"
# A package of its own whose only job is to build the generator's CLI at the pinned version.
cat > "$tool/Package.swift.new" <<PKG
// swift-tools-version:6.0
import PackageDescription
let package = Package(
    name: "ipcemu-openapi-tool",
    dependencies: [.package(url: "https://github.com/apple/swift-openapi-generator", exact: "$GENERATOR_VERSION")],
    targets: [.target(name: "placeholder", path: "Sources/placeholder")]
)
PKG
cmp -s "$tool/Package.swift.new" "$tool/Package.swift" || mv "$tool/Package.swift.new" "$tool/Package.swift"
rm -f "$tool/Package.swift.new"
echo "// Not used: this package only builds swift-openapi-generator's CLI." > "$tool/Sources/placeholder/placeholder.swift"
swift build --package-path "$tool" --product swift-openapi-generator 2>&1 | grep -E "error:|Build complete" >&2 || true
generator="$(swift build --package-path "$tool" --show-bin-path)/swift-openapi-generator"
[ -x "$generator" ] || { echo "generate-openapi: the generator's CLI did not build" >&2; exit 1; }
[ "${1:-}" = "--build-only" ] && { echo "generate-openapi: built $generator"; exit 0; }
out="$(mktemp -d "${TMPDIR:-/tmp}/ipcemu-openapi-gen.XXXXXX")"
trap 'rm -rf "$out"' EXIT
"$generator" generate "$spec/openapi.yaml" --config "$spec/openapi-generator-config.yaml" --output-directory "$out" > "$out.log" 2>&1 \
  || { cat "$out.log" >&2; rm -f "$out.log"; exit 1; }
rm -f "$out.log"
if [ "${1:-}" = "--check" ]; then
  if ! diff -r "$committed" "$out" > "$out.diff" 2>&1; then
    head -40 "$out.diff" >&2; rm -f "$out.diff"
    echo "generate-openapi: $committed is not what swift-openapi-generator $GENERATOR_VERSION makes of openapi.yaml; run scripts/generate-openapi.sh and commit" >&2
    exit 1
  fi
  rm -f "$out.diff"
  echo "generate-openapi: $committed is current (swift-openapi-generator $GENERATOR_VERSION)"
  exit 0
fi
rm -rf "$committed"
mkdir -p "$committed"
cp "$out"/*.swift "$committed/"
echo "generate-openapi: wrote $(ls "$committed" | wc -l) files to $committed (swift-openapi-generator $GENERATOR_VERSION)"
