#!/usr/bin/env bash
# The JavaScript package's node tests (ctest js_node_tests): run.sh <wasm build dir>.
# Writes the oracle and compiles the mlp to a plan with the wasm CLI, then node --test.
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 "$here/make_oracle.py" "$tmp/oracle.json"
node --no-experimental-fetch "$build/bin/ferrite.js" compile "$here/../../examples/models/mlp.onnx" \
  --backend portable -o "$tmp/mlp.fplan" >/dev/null
FERRITE_JS_DIR=$build/js FERRITE_ORACLE=$tmp/oracle.json FERRITE_PLAN=$tmp/mlp.fplan \
  node --test "$here/ferrite.test.mjs" "$here/run_signatures.test.mjs"
