#!/usr/bin/env bash
# ctest python_install: scripts/install_python.sh installs the built module into a scratch
# user site (PYTHONUSERBASE), and /usr/bin/python3, started outside the repository with no
# PYTHONPATH, imports it from there and runs the example MLP on the jit and reference
# backends (outputs compared, and the softmax rows summing to 1).
set -euo pipefail
build=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

export PYTHONUSERBASE=$tmp/userbase
unset PYTHONPATH
bash "$root/scripts/install_python.sh" "$build"
cd "$tmp"
/usr/bin/python3 - "$root/examples/models/mlp.onnx" "$PYTHONUSERBASE" <<'PY'
import sys
import numpy as np
import ferrite
model, userbase = sys.argv[1:3]
assert ferrite.__file__.startswith(userbase), f"imported {ferrite.__file__}, not the installed module"
x = np.sin(np.float32(0.37) * np.arange(64, dtype=np.float32)).reshape(1, 64)
outs = {}
for backend in ("jit", "reference"):
    sess = ferrite.InferenceSession(model, backend=backend, threads=1)
    outs[backend] = sess.run(None, {sess.get_inputs()[0].name: x})[0]
np.testing.assert_allclose(outs["jit"], outs["reference"], rtol=1e-5, atol=1e-6)
np.testing.assert_allclose(outs["jit"].sum(axis=-1), 1.0, rtol=1e-5)
print("installed module:", ferrite.__file__)
PY
