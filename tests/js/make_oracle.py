#!/usr/bin/python3
"""Writes the JavaScript tests' oracle: an input for the example mlp and numpy's output,
computed from the model's own weights. /usr/bin/python3 make_oracle.py OUT.json"""
import json
import pathlib
import sys

import numpy as np
import onnx
from onnx import numpy_helper

mlp = pathlib.Path(__file__).resolve().parents[2] / "examples" / "models" / "mlp.onnx"
w = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(mlp)).graph.initializer}
x = np.random.default_rng(11).standard_normal((1, 64)).astype(np.float32)
h = np.maximum(x @ w["w1"] + w["b1"], 0)
z = h @ w["w2"] + w["b2"]
e = np.exp(z - z.max())
y = e / e.sum()
json.dump({"x": x.ravel().tolist(), "y": y.ravel().astype(float).tolist()}, open(sys.argv[1], "w"))
