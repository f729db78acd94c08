#!/usr/bin/env bash
# examples/embed_c built with plain `cc` against bindings/c/ferrite.h and run (ctest:
# embed_example.sh <build dir>): on the ONNX mlp with libferrite.so, and on its compiled
# plan with both libferrite.so and the runtime-only libferrite_rt.so. Each printed output
# is checked against numpy computing the mlp from the model's own weights.
set -euo pipefail
build=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
mlp=$root/examples/models/mlp.onnx
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for lib in ferrite ferrite_rt; do
  cc -std=c99 -O2 -Wall -Wextra -Werror "$root/examples/embed_c/main.c" -I "$root/bindings/c" \
    -L "$build/lib" -l$lib -Wl,-rpath,"$build/lib" -lm -o "$tmp/embed_$lib"
done
"$build/bin/ferrite" compile "$mlp" -o "$tmp/mlp.fplan" >/dev/null

check() {  # check NAME OUTPUT_FILE
  /usr/bin/python3 - "$mlp" "$2" "$1" <<'PY'
import math, sys
import numpy as np
import onnx
from onnx import numpy_helper
model, out, name = sys.argv[1:4]
w = {t.name: numpy_helper.to_array(t) for t in onnx.load(model).graph.initializer}
x = np.sin(np.float32(0.37) * np.arange(64, dtype=np.float32)).reshape(1, 64)
h = np.maximum(x @ w["w1"] + w["b1"], 0)
z = h @ w["w2"] + w["b2"]
e = np.exp(z - z.max())
expected = (e / e.sum()).ravel()
line = [l for l in open(out) if l.startswith("y: shape [1,10]")]
if len(line) != 1:
    sys.exit(f"FAIL {name}: no 'y: shape [1,10]' line in:\n" + open(out).read())
got = np.array([float(v) for v in line[0].split()[3:]])
err = np.abs(got - expected).max()
if len(got) != 10 or err > 1e-5:
    sys.exit(f"FAIL {name}: y = {got}, numpy {expected} (max error {err})")
print(f"ok   {name}: y matches numpy (max error {err:.2e})")
PY
}

"$tmp/embed_ferrite" "$mlp" >"$tmp/onnx.txt"
grep -q "^input x: dtype 1, shape \[1,64\]$" "$tmp/onnx.txt" || { echo "FAIL input info: $(cat "$tmp/onnx.txt")"; exit 1; }
check "libferrite, ONNX model" "$tmp/onnx.txt"
"$tmp/embed_ferrite" "$tmp/mlp.fplan" 2 >"$tmp/plan.txt"
check "libferrite, compiled plan, 2 threads" "$tmp/plan.txt"
"$tmp/embed_ferrite_rt" "$tmp/mlp.fplan" >"$tmp/plan_rt.txt"
check "libferrite_rt, compiled plan" "$tmp/plan_rt.txt"
if "$tmp/embed_ferrite_rt" "$mlp" >"$tmp/out" 2>"$tmp/err"; then
  echo "FAIL libferrite_rt loaded an ONNX model"
  exit 1
fi
grep -q "runtime-only build" "$tmp/err" || { echo "FAIL libferrite_rt's error: $(cat "$tmp/err")"; exit 1; }
echo "ok   libferrite_rt refuses ONNX models: $(cat "$tmp/err")"
echo "all embed_c checks passed"
