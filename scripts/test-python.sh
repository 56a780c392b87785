#!/usr/bin/env bash
# Installs the pytest fixtures (python/) into a throwaway virtual environment, as a user would
# (`pip install ./python`), and runs their own tests against the debug ipcemu binary.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
binary="${IPCEMU_BIN:-$root/.build/debug/ipcemu}"
[ -x "$binary" ] || { echo "test-python: $binary not built (swift build first)" >&2; exit 1; }
venv="$(mktemp -d "${TMPDIR:-/tmp}/ipcemu-pytest-venv.XXXXXX")"
trap 'rm -rf "$venv"' EXIT
# System site packages: pytest is usually there already; pip fetches it otherwise.
python3 -m venv --system-site-packages "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$root/python"
cd "$root/python"
IPCEMU_BIN="$binary" "$venv/bin/python" -m pytest -p no:cacheprovider -q tests "$@"
