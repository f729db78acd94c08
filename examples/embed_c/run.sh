#!/usr/bin/env bash
# Builds examples/embed_c against the C API with plain `cc` and runs it:
#   bash examples/embed_c/run.sh [MODEL] [THREADS]
# (default examples/models/mlp.onnx). Builds libferrite.so first if it is missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -f build/native/lib/libferrite.so ] || bash scripts/build.sh native ferrite_shared >/dev/null
out=build/native/examples/embed_c
mkdir -p "$out"
cc -std=c99 -O2 -Wall -Wextra -Werror examples/embed_c/main.c -I bindings/c \
  -L build/native/lib -lferrite -Wl,-rpath,"$PWD/build/native/lib" -lm -o "$out/embed_c"
"$out/embed_c" "${1:-examples/models/mlp.onnx}" "${2:-1}"
