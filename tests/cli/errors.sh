#!/usr/bin/env bash
# The CLI's error paths as a user meets them (ctest: errors.sh "<runner>" <cli>; the runner
# is empty natively and "node --no-experimental-fetch" for wasm). Each bad invocation must
# exit non-zero and print exactly one stderr line, `error: ...`, naming the problem. Then
# valid runs must succeed, with outputs checked against numpy.
set -uo pipefail

runner=$1
cli=$2
here=$(cd "$(dirname "$0")" && pwd)
fixtures=$here/fixtures
mlp=$here/../../examples/models/mlp.onnx
python=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/cli/check_lib.sh
. "$here/check_lib.sh"

ferrite() {
  # shellcheck disable=SC2086  # the runner is a command line to split
  $runner "$cli" "$@"
}

# Inputs for add_relu.onnx (x float32[2,3]) and its expected output relu(x + c).
$python - "$tmp" <<'PY' || { echo "FAIL cannot write test inputs with numpy"; exit 1; }
import sys
import numpy as np
d = sys.argv[1]
x = np.array([[-1.0, 0.25, -0.75], [2.0, 0.5, 0.1]], dtype=np.float32)
np.save(d + "/x.npy", x)
np.save(d + "/x_transposed.npy", x.T.copy())
np.save(d + "/x38.npy", np.ones((3, 8), np.float32))
np.save(d + "/x_conv.npy", np.ones((2, 32, 28, 28), np.float32))
np.save(d + "/x_int64.npy", np.arange(6, dtype=np.int64).reshape(2, 3))
np.save(d + "/n3.npy", np.array(3, dtype=np.int64))
np.save(d + "/pair.npy", np.array([1, -2], dtype=np.float32))
np.save(d + "/x_fortran.npy", np.asfortranarray(x))
np.save(d + "/y_expected.npy", np.maximum(x + np.array([-0.5, 0, 0.5], np.float32), 0))
PY
# Models whose names hold terminal escapes, forged lines and invalid UTF-8, to be quoted
# escaped: a node and op type (an unsupported op), and an input and output (a valid model).
# Protobuf refuses invalid UTF-8, so those bytes replace a placeholder of the same length.
$python - "$tmp" <<'PY' || { echo "FAIL cannot write test models with onnx"; exit 1; }
import sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper
d = sys.argv[1]
evil = b"\x1b[2J\x1b[H\nerror: forged\r\x07\x7f\xff\xfe\xc2\x9b\xe2\x80\xae"
valid = evil.replace(b"\xff\xfe", b"")  # an input name a command line can give, on node too
def save(nodes, x, y, path, inits=()):
    f32 = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3])
    g = helper.make_graph(nodes, "g", [f32(x)], [f32(y)], initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    data = m.SerializeToString()
    for name in (evil, valid):
        data = data.replace(b"P" * len(name), name)
    open(path, "wb").write(data)
pe, pv = "P" * len(evil), "P" * len(valid)
save([helper.make_node("Fancy" + pe, ["x"], ["y"], name=pe)], "x", "y", d + "/evil_node.onnx")
c = numpy_helper.from_array(np.array([-0.5, 0.0, 0.5], dtype=np.float32), "c")
save([helper.make_node("Add", ["x" + pv, "c"], ["s"], name="add"),
      helper.make_node("Relu", ["s"], ["y" + pe], name="relu")],
     "x" + pv, "y" + pe, d + "/evil_io.onnx", [c])
# Two outputs whose names give one file name ("a/b" and "a_b" -> a_b.npy): y and -y.
f32 = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3])
g = helper.make_graph([helper.make_node("Identity", ["x"], ["a/b"]),
                       helper.make_node("Neg", ["x"], ["a_b"])], "g", [f32("x")],
                      [f32("a/b"), f32("a_b")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
open(d + "/same_file_name.onnx", "wb").write(m.SerializeToString())
PY
# No control character but newlines, and valid UTF-8 (in $tmp/err and $tmp/out).
expect_printable() {
  if $python -c "import sys, unicodedata
for f in sys.argv[1:]:
    t = open(f, 'rb').read().decode('utf-8')
    assert not any(unicodedata.category(ch) == 'Cc' and ch != '\n' for ch in t), f
" "$tmp/err" "$tmp/out" 2>/dev/null; then
    echo "ok   $1: printable"
  else
    fail "$1: control bytes or invalid UTF-8 in the output: $(od -c "$tmp/err" "$tmp/out" | head -20)"
  fi
}
head -c 60 "$fixtures/add_relu.onnx" >"$tmp/truncated.onnx"
echo "not an npy file" >"$tmp/garbage.npy"

expect_error "truncated model" 1 "truncated.onnx" ferrite run "$tmp/truncated.onnx"
expect_error "unknown op" 1 "FancyOp" ferrite run "$fixtures/unknown_op.onnx"
expect_error "invalid regular expression" 1 "invalid pattern '[a-z' (RE2 syntax): missing ]" \
  ferrite run "$fixtures/regex_invalid.onnx"
expect_error "missing model" 1 "missing.onnx" ferrite run "$tmp/missing.onnx"
expect_error "missing input file" 1 "nope.npy" ferrite run "$fixtures/add_relu.onnx" --input "x=$tmp/nope.npy"
expect_error "corrupt input file" 1 "garbage.npy" ferrite run "$fixtures/add_relu.onnx" --input "x=$tmp/garbage.npy"
expect_error "fortran-order input" 1 "Fortran" ferrite run "$fixtures/add_relu.onnx" --input "x=$tmp/x_fortran.npy"
expect_error "misnamed input" 1 "unknown input 'y' (model inputs: x)" ferrite \
  run "$fixtures/add_relu.onnx" --input "y=$tmp/x.npy"
expect_error "input given twice" 1 "input 'x' given twice" ferrite \
  run "$fixtures/add_relu.onnx" --input "x=$tmp/x.npy" --input "x=$tmp/x.npy"
expect_error "wrong shape" 1 "input 'x': expected shape [2,3], got [3,2]" ferrite \
  run "$fixtures/add_relu.onnx" --input "x=$tmp/x_transposed.npy"
expect_error "wrong dtype" 1 "input 'x': expected float32, got int64" ferrite \
  run "$fixtures/add_relu.onnx" --input "x=$tmp/x_int64.npy"
expect_error "unknown option" 2 "--bogus" ferrite run "$fixtures/add_relu.onnx" --bogus
expect_error "unknown backend" 2 "gpu" ferrite run "$fixtures/add_relu.onnx" --backend gpu
expect_error "bad --input" 2 "NAME=FILE.npy" ferrite run "$fixtures/add_relu.onnx" --input x
expect_error "unknown command" 2 "frobnicate" ferrite frobnicate
expect_error "conformance without dir" 1 "nodir" ferrite conformance "$tmp/nodir"
expect_error "bad --memory-limit" 2 "'12x' is not a memory size" ferrite \
  run "$fixtures/add_relu.onnx" --memory-limit 12x
expect_error "past the memory limit" 1 "more than the memory limit of 30 bytes" ferrite \
  run "$fixtures/add_relu.onnx" --input "x=$tmp/x.npy" --memory-limit 30
if [ -z "$runner" ]; then  # a wasm module under node does not see the process environment
  expect_error "bad FERRITE_MEMORY_LIMIT" 1 "FERRITE_MEMORY_LIMIT: 'lots'" env \
    FERRITE_MEMORY_LIMIT=lots "$cli" run "$fixtures/add_relu.onnx" --input "x=$tmp/x.npy"
fi

# Names from models are quoted escaped: one error line, no control bytes, valid UTF-8.
escaped='\x1b[2J\x1b[H\nerror: forged\r\x07\x7f\xff\xfe\u009b\u202e'
escaped_valid='\x1b[2J\x1b[H\nerror: forged\r\x07\x7f\u009b\u202e'
expect_error "control bytes in a node name" 1 "Fancy$escaped '$escaped': unsupported operator" \
  ferrite run "$tmp/evil_node.onnx"
expect_printable "control bytes in a node name"
expect_error "control bytes in inspect" 1 "'$escaped'" ferrite inspect "$tmp/evil_node.onnx"
expect_printable "control bytes in inspect"
expect_error "control bytes in an input name" 1 \
  "input 'x$escaped_valid': expected shape [2,3], got [3,2]" ferrite run "$tmp/evil_io.onnx" \
  --input "x"$'\x1b[2J\x1b[H\nerror: forged\r\x07\x7f\xc2\x9b\xe2\x80\xae'"=$tmp/x_transposed.npy"
expect_printable "control bytes in an input name"
expect_error "control bytes in --input" 1 "unknown input 'z\x1b[2J' (model inputs: x$escaped_valid)" \
  ferrite run "$tmp/evil_io.onnx" --input "z"$'\x1b[2J'"=$tmp/x.npy"
expect_printable "control bytes in --input"
if ferrite run "$tmp/evil_io.onnx" >"$tmp/out" 2>"$tmp/err" &&
  grep -qF "output 'y$escaped': float32[2,3]" "$tmp/out"; then
  expect_printable "control bytes in output names (a valid run)"
else
  fail "valid run with escaped names: $(cat "$tmp/err" "$tmp/out")"
fi
if ferrite inspect "$tmp/evil_io.onnx" >"$tmp/out" 2>"$tmp/err" &&
  grep -qF "input 'x$escaped_valid': float32[2,3]" "$tmp/out" &&
  grep -qF "output 'y$escaped': float32[2,3]" "$tmp/out"; then
  expect_printable "control bytes in names (inspect)"
else
  fail "inspect with escaped names: $(cat "$tmp/err" "$tmp/out")"
fi

# Valid runs: both backends, outputs written and compared with numpy's relu(x + c).
for backend in reference portable; do
  out=$tmp/out_$backend
  if ! ferrite run "$fixtures/add_relu.onnx" --input "x=$tmp/x.npy" --backend "$backend" \
    --output-dir "$out" >"$tmp/out" 2>"$tmp/err"; then
    fail "valid run ($backend): $(cat "$tmp/err")"
  elif ! grep -qF "output 'y': float32[2,3] [0, 0.25, 0, 1.5, 0.5, 0.6]" "$tmp/out"; then
    fail "valid run ($backend): unexpected output: $(cat "$tmp/out")"
  elif ! $python -c "import numpy as np, sys; a = np.load(sys.argv[1]); e = np.load(sys.argv[2]); \
sys.exit(0 if a.dtype == e.dtype and np.allclose(a, e, rtol=1e-6, atol=0) else 1)" \
    "$out/y.npy" "$tmp/y_expected.npy"; then
    fail "valid run ($backend): $out/y.npy differs from numpy"
  else
    echo "ok   valid run ($backend)"
  fi
done

# Output names that map to one file name: each output keeps its own file.
out=$tmp/out_same
if ! ferrite run "$tmp/same_file_name.onnx" --input "x=$tmp/x.npy" --output-dir "$out" \
  >"$tmp/out" 2>"$tmp/err"; then
  fail "outputs of one file name: $(cat "$tmp/err")"
elif ! $python -c "import numpy as np, sys; x = np.load(sys.argv[1]); \
a = np.load(sys.argv[2]); b = np.load(sys.argv[3]); \
sys.exit(0 if np.array_equal(a, x) and np.array_equal(b, -x) else 1)" \
  "$tmp/x.npy" "$out/a_b.npy" "$out/a_b_1.npy"; then
  fail "outputs of one file name: $(ls "$out") $(cat "$tmp/out")"
else
  echo "ok   outputs of one file name: $(ls "$out" | tr '\n' ' ')"
fi

# The example model with generated inputs and a short benchmark.
if ! ferrite run "$mlp" --bench 3 >"$tmp/out" 2>"$tmp/err"; then
  fail "example run: $(cat "$tmp/err")"
elif ! grep -q "note: input 'x' not given" "$tmp/out" || ! tail -1 "$tmp/out" | grep -q '^median_ms: '; then
  fail "example run: unexpected output: $(cat "$tmp/out")"
else
  echo "ok   example run: $(tail -1 "$tmp/out")"
fi

# --bench-json writes every timed run (read back with python's json module).
if ! ferrite run "$mlp" --bench 4 --warmup 2 --bench-json "$tmp/bench.json" >"$tmp/out" 2>"$tmp/err"; then
  fail "bench-json run: $(cat "$tmp/err")"
elif ! "$python" -c "import json, sys; t = json.load(open(sys.argv[1]))
sys.exit(0 if len(t['samples_ms']) == 4 and t['warmup'] == 2 and t['ready_ms'] > 0 else 1)" \
  "$tmp/bench.json"; then
  fail "bench-json run: unexpected JSON: $(cat "$tmp/bench.json")"
else
  echo "ok   bench-json run"
fi

# --profile lists every step of the timed runs, slowest first, and their sum.
if ! ferrite run "$mlp" --bench 3 --profile >"$tmp/out" 2>"$tmp/err"; then
  fail "profile run: $(cat "$tmp/err")"
elif ! grep -q '^profile: [0-9]* steps, ms per run over 3 runs$' "$tmp/out" ||
  ! grep -qE '^ +[0-9.]+ +[0-9.]+%  (kernel|extern) ' "$tmp/out" ||
  ! tail -1 "$tmp/out" | grep -q '^profile_total_ms: '; then
  fail "profile run: unexpected output: $(cat "$tmp/out")"
else
  echo "ok   profile run: $(tail -1 "$tmp/out")"
fi

# A sequence output: its length, then each tensor on a line; --output-dir writes NAME_k.npy.
if ! ferrite run "$fixtures/seq_loop.onnx" --input "n=$tmp/n3.npy" --input "x=$tmp/pair.npy" \
  --output-dir "$tmp/seq" >"$tmp/out" 2>"$tmp/err"; then
  fail "sequence output: $(cat "$tmp/err")"
elif ! grep -qF "output 'seq': sequence<float32> of 3" "$tmp/out" ||
  ! grep -qF "  [2] float32[2] [2, -4]" "$tmp/out" || [ ! -f "$tmp/seq/seq_2.npy" ]; then
  fail "sequence output: $(cat "$tmp/out")"
else
  echo "ok   sequence output: $(grep -c '^  \[' "$tmp/out") items"
fi
expect_error "sequence input" 1 "input 'seq' is a sequence" ferrite run "$fixtures/seq_in.onnx"

# A symbolic batch >= 2 compiles once for every shape, and says so; an op not symbolic yet
# says which node kept the model compiled per shape.
ferrite run "$fixtures/sym_mlp.onnx" --input x="$tmp/x38.npy" >"$tmp/out" 2>"$tmp/err"
if ! grep -qx "symbolic: compiled once for every shape" "$tmp/out"; then
  fail "symbolic run: $(tail -2 "$tmp/out") $(cat "$tmp/err")"
else
  echo "ok   symbolic run: $(tail -1 "$tmp/out")"
fi
ferrite run "$fixtures/sym_conv.onnx" --input x="$tmp/x_conv.npy" >"$tmp/out" 2>"$tmp/err"
if ! grep -q "^symbolic: compiled per shape (Conv 'conv1'" "$tmp/out"; then
  fail "per-shape run: $(tail -2 "$tmp/out") $(cat "$tmp/err")"
else
  echo "ok   per-shape run: $(tail -1 "$tmp/out")"
fi

# --dump writes the compiler's intermediate forms.
if ! ferrite run "$fixtures/add_relu.onnx" --dump "$tmp/dump" >"$tmp/out" 2>"$tmp/err"; then
  fail "dump run: $(cat "$tmp/err")"
elif [ -z "$(ls -A "$tmp/dump" 2>/dev/null)" ]; then
  fail "dump run: nothing written to --dump DIR"
else
  echo "ok   dump run: $(ls "$tmp/dump" | tr '\n' ' ')"
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures CLI check(s) failed"
  exit 1
fi
echo "all CLI checks passed"
