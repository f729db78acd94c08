#!/usr/bin/env bash
# README command #1: install what is missing, build the CLI and the Python module (installed
# for /usr/bin/python3 by scripts/install_python.sh), and run the example MLP (inputs
# generated, outputs printed, then 50 timed runs ending with `median_ms: X`).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
bash scripts/build.sh native ferrite ferrite_python
bash scripts/install_python.sh build/native
build/native/bin/ferrite run examples/models/mlp.onnx --bench 50
