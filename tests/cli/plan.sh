#!/usr/bin/env bash
# Compiled plans (ctest: plan.sh "<runner>" <ferrite> <ferrite-rt>): `ferrite compile`
# writes a plan that `ferrite run` and the runtime-only `ferrite-rt` load; both give the
# bytes `ferrite run` gives on the ONNX model, on every backend. Then the error paths: a
# truncated or corrupt plan, the wrong shapes for a plan, an ONNX model given to the
# runtime-only build, compile's usage errors. Each must exit non-zero with one stderr line
# `error: ...` naming the problem.
set -uo pipefail

runner=$1
cli=$2
rt=$3
here=$(cd "$(dirname "$0")" && pwd)
fixtures=$here/fixtures
mlp=$here/../../examples/models/mlp.onnx
python=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/cli/check_lib.sh
. "$here/check_lib.sh"

run_tool() {  # run_tool BINARY ARGS...
  local bin=$1
  shift
  # shellcheck disable=SC2086  # the runner is a command line to split
  $runner "$bin" "$@"
}

$python - "$tmp" <<'PY' || { echo "FAIL cannot write test inputs with numpy"; exit 1; }
import sys
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng(7)
np.save(d + "/x.npy", rng.standard_normal((1, 64)).astype(np.float32))
np.save(d + "/a3.npy", rng.standard_normal((3, 3)).astype(np.float32))
np.save(d + "/a5.npy", rng.standard_normal((5, 3)).astype(np.float32))
PY

# The example mlp compiled; run from the plan by both CLIs, on every backend, against the
# ONNX model run directly.
if ! run_tool "$cli" compile "$mlp" -o "$tmp/mlp.fplan" >"$tmp/out" 2>"$tmp/err"; then
  fail "compile: $(cat "$tmp/err")"
elif ! grep -q "^wrote .*mlp.fplan: [0-9]* bytes" "$tmp/out" || ! grep -qF "input x: float32[1,64]" "$tmp/out"; then
  fail "compile: unexpected output: $(cat "$tmp/out")"
else
  echo "ok   compile: $(grep '^wrote' "$tmp/out")"
fi
# A symbolic batch: compiled for the shape of the --input file.
if ! run_tool "$cli" compile "$fixtures/sym_add.onnx" --input "a=$tmp/a3.npy" --input "b=$tmp/a3.npy" \
  -o "$tmp/sym.fplan" >"$tmp/out" 2>"$tmp/err"; then
  fail "compile sym_add: $(cat "$tmp/err")"
elif ! grep -qF "input a: float32[3,3]" "$tmp/out"; then
  fail "compile sym_add: unexpected output: $(cat "$tmp/out")"
elif ! run_tool "$rt" run "$tmp/sym.fplan" --input "a=$tmp/a3.npy" --input "b=$tmp/a3.npy" \
  --output-dir "$tmp/sym" >/dev/null 2>"$tmp/err"; then
  fail "ferrite-rt run sym_add: $(cat "$tmp/err")"
elif ! $python -c "import numpy as np, sys; a = np.load(sys.argv[1]); y = np.load(sys.argv[2])
sys.exit(0 if np.array_equal(y, a + a) else 1)" "$tmp/a3.npy" "$tmp/sym/y.npy"; then
  fail "ferrite-rt run sym_add: y != a + b"
else
  echo "ok   a symbolic batch compiled for 3 rows and run by ferrite-rt"
fi
backends=$(run_tool "$cli" run "$tmp/mlp.fplan" --backend nope 2>&1 | sed -n 's/.*(available: \(.*\))/\1/p' | tr -d ',')
[ -n "$backends" ] || fail "cannot list the backends"
# same_as_direct WHAT PLAN TOOL BACKEND: TOOL runs PLAN on BACKEND with the bytes of the
# direct run of the mlp ($tmp/direct_BACKEND/y.npy).
same_as_direct() {
  local what=$1 plan=$2 tool=$3 backend=$4 bin=$cli out
  [ "$tool" = ferrite-rt ] && bin=$rt
  out=$(mktemp -d -p "$tmp")
  if ! run_tool "$bin" run "$plan" --input "x=$tmp/x.npy" --backend "$backend" \
    --output-dir "$out" >"$tmp/out" 2>"$tmp/err"; then
    fail "$tool run of $what ($backend): $(cat "$tmp/err")"
  elif ! cmp -s "$tmp/direct_$backend/y.npy" "$out/y.npy"; then
    fail "$tool run of $what ($backend): y.npy differs from the direct run"
  else
    echo "ok   $tool runs $what ($backend): same bytes as the ONNX model"
  fi
}

for backend in $backends; do
  mkdir -p "$tmp/direct_$backend"
  if ! run_tool "$cli" run "$mlp" --input "x=$tmp/x.npy" --backend "$backend" \
    --output-dir "$tmp/direct_$backend" >/dev/null 2>"$tmp/err"; then
    fail "direct run ($backend): $(cat "$tmp/err")"
    continue
  fi
  for tool in ferrite ferrite-rt; do same_as_direct "the plan" "$tmp/mlp.fplan" "$tool" "$backend"; done
done
# The model and the plan piped in as /dev/stdin: read through once, never reopened. (Not
# in wasm: node's file system reads no bytes from a pipe opened by name; the CLI says so.)
pipes=("$mlp" "$tmp/mlp.fplan")
[ -n "$runner" ] && pipes=()
for what in "${pipes[@]}"; do
  out=$(mktemp -d -p "$tmp")
  if ! cat "$what" | run_tool "$cli" run /dev/stdin --input "x=$tmp/x.npy" --backend reference \
    --output-dir "$out" >/dev/null 2>"$tmp/err"; then
    fail "ferrite run /dev/stdin < $(basename "$what"): $(cat "$tmp/err")"
  elif ! cmp -s "$tmp/direct_reference/y.npy" "$out/y.npy"; then
    fail "ferrite run /dev/stdin < $(basename "$what"): y.npy differs from the direct run"
  else
    echo "ok   $(basename "$what") piped into ferrite run /dev/stdin: same bytes"
  fi
done

# A plan of the previous format (version 5: externs carry chains of post-ops where version 6
# carries epilogue bodies), compiled from the mlp by the build before the change
# (fixtures/mlp_v5.fplan: MatMul then add(in 2) then relu, MatMul then add(in 2)): both
# CLIs still run it, on every backend, with the bytes of the ONNX model's run.
for backend in $backends; do
  for tool in ferrite ferrite-rt; do
    same_as_direct "a version-5 plan" "$fixtures/mlp_v5.fplan" "$tool" "$backend"
  done
done

# --prepack: the weights as each backend packs them here, in place of the raw ones; both
# CLIs load the plan on that backend and give the same bytes, and the reference backend,
# which cannot use them, refuses it.
for backend in $backends; do
  [ "$backend" = reference ] && continue
  plan=$tmp/mlp_$backend.fplan
  if ! run_tool "$cli" compile "$mlp" -o "$plan" --backend "$backend" --prepack >"$tmp/out" 2>"$tmp/err"; then
    fail "compile --prepack ($backend): $(cat "$tmp/err")"
    continue
  elif ! grep -q "^prepacked: [1-9][0-9]* weights of [0-9]* bytes, in place of [1-9][0-9]* raw bytes" "$tmp/out"; then
    fail "compile --prepack ($backend): unexpected output: $(cat "$tmp/out")"
  else
    echo "ok   compile --prepack ($backend): $(grep '^prepacked' "$tmp/out")"
  fi
  for tool in ferrite ferrite-rt; do
    bin=$cli
    [ "$tool" = ferrite-rt ] && bin=$rt
    mkdir -p "$tmp/packed_${tool}_$backend"
    if ! run_tool "$bin" run "$plan" --input "x=$tmp/x.npy" --backend "$backend" \
      --output-dir "$tmp/packed_${tool}_$backend" >/dev/null 2>"$tmp/err"; then
      fail "$tool run of the prepacked plan ($backend): $(cat "$tmp/err")"
    elif ! cmp -s "$tmp/direct_$backend/y.npy" "$tmp/packed_${tool}_$backend/y.npy"; then
      fail "$tool run of the prepacked plan ($backend): y.npy differs from the direct run"
    else
      echo "ok   $tool runs the prepacked plan ($backend): same bytes as the ONNX model"
    fi
  done
  expect_error "prepacked for $backend, run on reference" 1 "is in the plan only prepacked" \
    run_tool "$cli" run "$plan" --input "x=$tmp/x.npy" --backend reference
done

# Damaged plans, wrong feeds, and what a runtime-only build cannot do.
size=$(stat -c %s "$tmp/mlp.fplan")
head -c $((size / 2)) "$tmp/mlp.fplan" >"$tmp/truncated.fplan"
head -c 6 "$tmp/mlp.fplan" >"$tmp/magic_only.fplan"
cp "$tmp/mlp.fplan" "$tmp/version.fplan"
printf '\x63' | dd of="$tmp/version.fplan" bs=1 seek=8 conv=notrunc 2>/dev/null
for tool in ferrite ferrite-rt; do
  bin=$cli
  [ "$tool" = ferrite-rt ] && bin=$rt
  expect_error "$tool: truncated plan" 1 "truncated.fplan" run_tool "$bin" run "$tmp/truncated.fplan"
  expect_error "$tool: magic only" 1 "magic_only.fplan" run_tool "$bin" run "$tmp/magic_only.fplan"
  expect_error "$tool: other format version" 1 "unsupported format version 99" run_tool "$bin" run "$tmp/version.fplan"
  expect_error "$tool: wrong batch for the plan" 1 "input 'a': expected shape [3,3], got [5,3]" \
    run_tool "$bin" run "$tmp/sym.fplan" --input "a=$tmp/a5.npy" --input "b=$tmp/a5.npy"
  expect_error "$tool: misnamed input" 1 "unknown input 'y' (model inputs: x)" \
    run_tool "$bin" run "$tmp/mlp.fplan" --input "y=$tmp/x.npy"
done
expect_error "ferrite-rt: an ONNX model" 1 "runtime-only build" run_tool "$rt" run "$mlp"
expect_error "ferrite-rt: compile" 2 "runtime-only build" run_tool "$rt" compile "$mlp" -o "$tmp/x.fplan"
expect_error "compile without -o" 2 "-o FILE" run_tool "$cli" compile "$mlp"
expect_error "compile a plan" 1 "already a compiled plan" run_tool "$cli" compile "$tmp/mlp.fplan" -o "$tmp/again.fplan"
expect_error "compile to an unwritable path" 1 "nodir/m.fplan" \
  run_tool "$cli" compile "$mlp" -o "$tmp/nodir/m.fplan"
expect_error "compile a value-dependent model" 1 "cannot be compiled ahead of time" \
  run_tool "$cli" compile "$fixtures/reshape.onnx" -o "$tmp/r.fplan"

if [ "$failures" -ne 0 ]; then
  echo "$failures plan check(s) failed"
  exit 1
fi
echo "all plan checks passed"
