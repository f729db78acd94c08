#!/usr/bin/env bash
# tests/perf/run.sh [bench.py options] — Ferrite against onnxruntime-node, onnxruntime-web
# (wasm, under node) and PyTorch eager on the same models, inputs and machine.
#   --models a,b  --engines e1,e2  --rounds R  --iters N  --warmup W  --target-ms T
#   --out DIR (default build/perf/results)  --export-script PATH  --no-build
# Installs what is missing (Debian packages through scripts/setup.sh plus the peers' ones,
# the npm packages into build/perf/node_modules), builds Ferrite native and wasm
# (incrementally, unless --no-build), then runs tests/perf/bench.py, which prints the table
# and writes results.json, results.svg and table.txt. See tests/perf/README.md.
set -euo pipefail
cd "$(dirname "$0")/../.."

ORT_VERSION=1.30.0

# Debian packages: Ferrite's own (scripts/setup.sh), then the peers' — same idempotent
# check: nothing runs apt-get when everything is installed.
bash scripts/setup.sh
packages=(python3-torch python3-torchvision libopenblas0-openmp)
command -v npm >/dev/null 2>&1 || packages+=(npm)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -ne 0 ]; then
  echo "perf setup: installing ${missing[*]}"
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
  apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600)
  "${apt[@]}" update
  "${apt[@]}" install -y --no-install-recommends "${missing[@]}"
fi

# npm packages, pinned, into build/perf (git-ignored). --ignore-scripts: onnxruntime-node's
# post-install script downloads GPU binaries; the CPU library is inside the package.
installed() {
  node -p "require('./build/perf/node_modules/$1/package.json').version" 2>/dev/null || true
}
if [ "$(installed onnxruntime-node)" != "$ORT_VERSION" ] ||
  [ "$(installed onnxruntime-web)" != "$ORT_VERSION" ]; then
  mkdir -p build/perf
  [ -f build/perf/package.json ] || echo '{"name": "ferrite-perf-peers", "private": true}' \
    >build/perf/package.json
  echo "perf setup: npm install onnxruntime-node@$ORT_VERSION onnxruntime-web@$ORT_VERSION"
  (cd build/perf && npm install --ignore-scripts --no-audit --no-fund \
    "onnxruntime-node@$ORT_VERSION" "onnxruntime-web@$ORT_VERSION")
fi

exec /usr/bin/python3 tests/perf/bench.py "$@"
