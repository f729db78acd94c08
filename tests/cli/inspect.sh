#!/usr/bin/env bash
# `ferrite inspect` as a user meets it (ctest: inspect.sh "<runner>" <cli> [MODELS_DIR]; the
# runner is empty natively and "node --no-experimental-fetch" for wasm). The summary must
# end with exactly the two fixed lines, agree with the plan dump, and write the memory
# dumps; bad input must exit non-zero with one `error: ...` line. With MODELS_DIR (the
# exported test models), every model's planned pool must be within 1.05x its lower bound.
set -uo pipefail

runner=$1
cli=$2
models=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
fixtures=$here/fixtures
mlp=$here/../../examples/models/mlp.onnx
python=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() {
  echo "FAIL $1"
  failures=$((failures + 1))
}

ferrite() {
  # shellcheck disable=SC2086  # the runner is a command line to split
  $runner "$cli" "$@"
}

kernels_re='^kernels: [0-9]+ externs: [0-9]+$'
memory_re='^memory: planned [0-9]+ bytes, lower bound [0-9]+ bytes$'

# check_summary NAME FILE: the last three lines have the fixed format, planned >= lower
# bound, and the model was compiled once (at load when its inputs are static), or for a
# model in parts at least once per part shown.
check_summary() {
  local name=$1 out=$2
  local compiles kernels memory
  compiles=$(tail -3 "$out" | head -1)
  kernels=$(tail -2 "$out" | head -1)
  memory=$(tail -1 "$out")
  # A model in parts (cut at NonZero, If, ...): at least one compile per plan it shows (a
  # Loop's body compiles per shape its growing carried values take; the last is shown).
  local want="compiles: 1"
  if grep -q '^parts: [0-9]* plans$' "$out"; then
    local plans n
    plans=$(grep '^parts: [0-9]* plans$' "$out" | awk '{print $2}')
    n=$(echo "$compiles" | awk '{print $2}')
    want=$compiles
    [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge "$plans" ] || want="compiles: >= $plans"
  fi
  if [ "$compiles" != "$want" ]; then
    fail "$name: third line from the end is '$compiles', not '$want'"
  elif ! [[ $kernels =~ $kernels_re ]]; then
    fail "$name: next-to-last line is '$kernels'"
  elif ! [[ $memory =~ $memory_re ]]; then
    fail "$name: last line is '$memory'"
  else
    local planned bound
    planned=$(echo "$memory" | awk '{print $3}')
    bound=$(echo "$memory" | awk '{print $7}')
    if [ "$planned" -lt "$bound" ]; then
      fail "$name: planned $planned < lower bound $bound"
    else
      echo "ok   $name: $kernels / $memory"
      return 0
    fi
  fi
  return 1
}

# expect_error NAME TEXT ARGS...: non-zero exit, one stderr line `error: ...` containing TEXT.
expect_error() {
  local name=$1 text=$2 status=0
  shift 2
  ferrite "$@" >"$tmp/out" 2>"$tmp/err" || status=$?
  if [ "$status" -eq 0 ]; then
    fail "$name: exit status 0"
  elif [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -q '^error: ' "$tmp/err"; then
    fail "$name: stderr is not one 'error: ' line: $(cat "$tmp/err")"
  elif ! grep -qF -- "$text" "$tmp/err"; then
    fail "$name: stderr does not mention '$text': $(cat "$tmp/err")"
  else
    echo "ok   $name ($status): $(cat "$tmp/err")"
  fi
}

head -c 60 "$fixtures/add_relu.onnx" >"$tmp/truncated.onnx"
expect_error "missing model" "missing.onnx" inspect "$tmp/missing.onnx"
expect_error "truncated model" "truncated.onnx" inspect "$tmp/truncated.onnx"
expect_error "unknown op" "FancyOp" inspect "$fixtures/unknown_op.onnx"
expect_error "no model" "exactly one MODEL" inspect
expect_error "unknown option" "--bogus" inspect "$mlp" --bogus

# The example MLP, with a dump: the counts and the pool agree with 79_plan.txt, and the
# memory dumps exist (the SVG is well-formed XML with one tooltip per temp buffer).
if ! ferrite inspect "$mlp" --dump "$tmp/dump" >"$tmp/out" 2>"$tmp/err"; then
  fail "inspect mlp: $(cat "$tmp/err")"
elif check_summary "inspect mlp" "$tmp/out"; then
  plan=$tmp/dump/79_plan.txt
  want_kernels=$(grep -cE '^  [0-9]+: kernel ' "$plan")
  want_externs=$(grep -cE '^  [0-9]+: extern ' "$plan")
  want_pool=$(head -1 "$plan" | awk '{print $3}')
  temps=$(grep -cE "^  b[0-9]+ '.*' temp " "$plan")
  if ! tail -2 "$tmp/out" | head -1 | grep -qx "kernels: $want_kernels externs: $want_externs"; then
    fail "inspect mlp: counts differ from 79_plan.txt ($want_kernels kernels, $want_externs externs)"
  elif ! tail -1 "$tmp/out" | grep -q "^memory: planned $want_pool bytes"; then
    fail "inspect mlp: pool differs from 79_plan.txt ($want_pool)"
  elif ! grep -q "^input 'x': float32\[" "$tmp/out"; then
    fail "inspect mlp: no input line: $(cat "$tmp/out")"
  elif [ "$(grep -cE "^b[0-9]+ '" "$tmp/dump/70_plan_memory.txt")" -ne "$temps" ]; then
    fail "inspect mlp: 70_plan_memory.txt does not list the $temps temps"
  elif ! "$python" -c "import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
titles = [t for t in root.iter('{http://www.w3.org/2000/svg}title')]
sys.exit(0 if len(titles) >= int(sys.argv[2]) else 1)" "$tmp/dump/70_plan_memory.svg" "$temps"; then
    fail "inspect mlp: 70_plan_memory.svg is not an SVG with a tooltip per temp"
  else
    echo "ok   inspect mlp: agrees with the plan dump; 70_plan_memory.txt and 70_plan_memory.svg written"
  fi
fi

# Inputs given as .npy, and a symbolic dim (generated as 1): the shapes are reported.
"$python" -c "import numpy as np, sys; np.save(sys.argv[1], np.zeros((5, 3), np.float32))" \
  "$tmp/a.npy" || fail "cannot write test input with numpy"
if ! ferrite inspect "$fixtures/sym_add.onnx" --input "a=$tmp/a.npy" --input "b=$tmp/a.npy" \
  >"$tmp/out" 2>"$tmp/err"; then
  fail "inspect sym_add: $(cat "$tmp/err")"
elif check_summary "inspect sym_add" "$tmp/out" &&
  ! grep -qxF "output 'y': float32[5,3] (declared [N,3])" "$tmp/out"; then
  fail "inspect sym_add: output not [5,3], declared [N,3]: $(cat "$tmp/out")"
elif ! grep -qxF "input 'a': float32[5,3] (declared [N,3])" "$tmp/out"; then
  fail "inspect sym_add: input not [5,3], declared [N,3]: $(cat "$tmp/out")"
fi
expect_error "inspect misnamed input" "unknown input 'b'" \
  inspect "$fixtures/add_relu.onnx" --input "b=$tmp/a.npy"

# A model with a sequence output (a Loop building it, cut at its ops): its parts' plans.
if ! ferrite inspect "$fixtures/seq_loop.onnx" >"$tmp/out" 2>"$tmp/err"; then
  fail "inspect seq_loop: $(cat "$tmp/err")"
elif ! grep -q "^parts: [0-9]* plans" "$tmp/out"; then
  fail "inspect seq_loop: no parts line: $(cat "$tmp/out")"
else
  echo "ok   inspect seq_loop: $(grep '^parts:' "$tmp/out")"
fi

# Every exported test model: planned <= 1.05 x lower bound.
if [ -n "$models" ] && [ ! -d "$models" ]; then
  fail "$models is not a directory (export the models with tests/models/export_models.py)"
elif [ -n "$models" ]; then
  for dir in "$models"/*/; do
    name=$(basename "$dir")
    # The first data set's inputs (export_models.py's feeds/), where the model has them:
    # generated inputs do not fit every model (if_loop_nms reshapes x by 3 or 4).
    feeds=()
    for f in "$dir"feeds/*.npy; do
      [ -e "$f" ] && feeds+=(--input "$(basename "$f" .npy)=$f")
    done
    if ! ferrite inspect "$dir/model.onnx" "${feeds[@]}" >"$tmp/out" 2>"$tmp/err"; then
      fail "inspect $name: $(cat "$tmp/err")"
    elif check_summary "inspect $name" "$tmp/out"; then
      read -r planned bound < <(tail -1 "$tmp/out" | awk '{print $3, $7}')
      if [ $((planned * 100)) -gt $((bound * 105)) ]; then
        fail "inspect $name: planned $planned > 1.05 x lower bound $bound"
      fi
    fi
  done
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures inspect check(s) failed"
  exit 1
fi
echo "all inspect checks passed"
