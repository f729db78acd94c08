#!/usr/bin/env bash
# README command #1: install what is missing, build the CLI, and run the example MLP
# (inputs generated, outputs printed, then 50 timed runs ending with `median_ms: X`).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
bash scripts/build.sh native ferrite
build/native/bin/ferrite run examples/models/mlp.onnx --bench 50
