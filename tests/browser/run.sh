#!/usr/bin/env bash
# The Chromium end-to-end test (ctest browser_chromium): run.sh <wasm build dir>.
# Installs playwright-core from npm into build/browser (once, pinned) and needs Debian's
# chromium-headless-shell (scripts/setup.sh installs it). Writes the oracle into
# build/browser, which the local server serves to the page.
set -euo pipefail
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
PLAYWRIGHT_VERSION=1.56.1
dir=$root/build/browser
mkdir -p "$dir"
if [ "$(node -p "try { require('$dir/node_modules/playwright-core/package.json').version } catch { '' }")" != "$PLAYWRIGHT_VERSION" ]; then
  (cd "$dir" && npm install --no-audit --no-fund --no-save --silent "playwright-core@$PLAYWRIGHT_VERSION")
fi
[ -f "$build/js/ferrite.mjs" ] || { echo "FAIL no $build/js/ferrite.mjs (build wasm first)"; exit 1; }
/usr/bin/python3 "$root/tests/js/make_oracle.py" "$dir/oracle.json"
node "$root/tests/browser/chromium_test.mjs" "$root" "/build/browser/oracle.json" "$dir/node_modules/playwright-core"
