#!/usr/bin/env bash
# Installs the built Python module `ferrite` (build/native/python/ferrite.cpython-*.so) for
# /usr/bin/python3: copies it into that python's user site-packages (`python3 -m site
# --user-site`, e.g. ~/.local/lib/python3.11/site-packages; PYTHONUSERBASE moves it), so that
# `import ferrite` works from any directory, with no PYTHONPATH and no root. Called by
# scripts/run_example.sh; `bash scripts/install_python.sh [BUILD_DIR]` reinstalls by hand.
set -euo pipefail
cd "$(dirname "$0")/.."

build=${1:-build/native}
shopt -s nullglob
modules=("$build"/python/ferrite.cpython-*.so)
if [ ${#modules[@]} -ne 1 ]; then
  echo "install_python: expected one module in $build/python; build it first:" \
    "bash scripts/build.sh native ferrite_python" >&2
  exit 1
fi
site=$(/usr/bin/python3 -m site --user-site)
mkdir -p "$site"
rm -f "$site"/ferrite.cpython-*.so  # a module from an older python or build
install -m 0644 "${modules[0]}" "$site/"
echo "install_python: $site/$(basename "${modules[0]}")"
