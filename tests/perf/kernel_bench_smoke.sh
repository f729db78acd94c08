#!/usr/bin/env bash
# ctest kernel_bench_smoke: kernel_bench_smoke.sh BENCH [MODELS_DIR]. Runs every subcommand
# of ferrite_kernel_bench on small inputs — stream and chain (portable and reference) on
# 100,000 floats, compile and models on the mlp model (MODELS_DIR/mlp/model.onnx when it
# was exported, else examples/models/mlp.onnx), ops on a 64^3 MatMul and a small Conv,
# portable-ops on four small cases (one with a fused residual and relu) — and checks that
# each succeeds, prints its table and writes its JSON, and that the chain's sampled outputs
# and the portable ops' results are right. Never timing.
set -uo pipefail

bench=$1
models=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() {
  echo "FAIL $1"
  failures=$((failures + 1))
}

# expect NAME PATTERN CMD...: CMD exits 0, its output matches PATTERN, its --json parses.
expect() {
  local name=$1 pattern=$2
  shift 2
  echo "== $name: $*"
  "$@" --json "$tmp/$name.json" >"$tmp/$name.out" 2>&1
  local status=$?
  cat "$tmp/$name.out"
  if [ $status -ne 0 ]; then
    fail "$name: exit status $status"
    return
  fi
  grep -Eq "$pattern" "$tmp/$name.out" || fail "$name: no line matching '$pattern'"
  /usr/bin/python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/$name.json" ||
    fail "$name: $tmp/$name.json is not JSON"
}

small=(--n 100000 --reps 2)
expect stream '^triad x86-64 \(sse2\) ' "$bench" stream "${small[@]}"
expect chain_portable 'check: [0-9]+ sampled elements, 0 wrong' \
  "$bench" chain --backend portable "${small[@]}"
expect chain_reference 'check: [0-9]+ sampled elements, 0 wrong' \
  "$bench" chain --backend reference "${small[@]}"

mlp=$here/../../examples/models/mlp.onnx
if [ -n "$models" ] && [ -f "$models/mlp/model.onnx" ]; then mlp=$models/mlp/model.onnx; fi
expect compile 'distinct kernels; prepare median' \
  "$bench" compile --backend portable --reps 2 "$mlp"
expect models 'speedup: ' "$bench" models --backends portable,reference --rounds 1 \
  --target-ms 1 "$mlp"
grep -q 'MISMATCH' "$tmp/models.out" && fail "models: outputs differ between backends"
expect portable_ops '^gemv_256 .* [0-9.]+$' \
  "$bench" portable-ops --only gemv_256,attn_qk,dw3x3_s2,conv1x1_64_256 --reps 1 --min-ms 1

# MatMul and Conv through the oneDNN and portable externs (exit status 1 when they disagree
# or oneDNN refuses them).
expect ops '^conv 8ch 14x14 3x3 pad 1 \+bias +oneDNN prepacked ' "$bench" ops --small --reps 2

# Usage errors exit 2; an unknown backend names the ones there are.
"$bench" chain >/dev/null 2>&1
[ $? -eq 2 ] || fail "chain without --backend: exit status not 2"
out=$("$bench" chain --backend nosuch --n 1000 --reps 1 2>&1)
[ $? -eq 1 ] && grep -q "unknown backend 'nosuch' (available: .*portable" <<<"$out" ||
  fail "chain --backend nosuch: $out"

if [ $failures -ne 0 ]; then
  echo "kernel_bench_smoke: $failures failure(s)"
  exit 1
fi
echo "kernel_bench_smoke: ok"
