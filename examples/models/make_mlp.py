#!/usr/bin/python3
"""Writes mlp.onnx, the example model of `scripts/run_example.sh`.

x float32[1,64] -> MatMul 64x128 + Add -> Relu -> MatMul 128x10 + Add -> Softmax -> y.
Weights come from a fixed seed, so the file is reproducible. Needs only onnx and numpy:
    /usr/bin/python3 examples/models/make_mlp.py [OUT.onnx]
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def make_mlp():
    rng = np.random.default_rng(20240607)
    # Scaled like PyTorch's default init so the logits stay in a sensible range.
    w1 = rng.uniform(-1, 1, (64, 128)).astype(np.float32) / np.float32(8.0)
    b1 = rng.uniform(-0.1, 0.1, (128,)).astype(np.float32)
    w2 = rng.uniform(-1, 1, (128, 10)).astype(np.float32) / np.float32(np.sqrt(128.0))
    b2 = rng.uniform(-0.1, 0.1, (10,)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h0"], name="fc1"),
        helper.make_node("Add", ["h0", "b1"], ["h1"], name="fc1_bias"),
        helper.make_node("Relu", ["h1"], ["h2"], name="relu"),
        helper.make_node("MatMul", ["h2", "w2"], ["h3"], name="fc2"),
        helper.make_node("Add", ["h3", "b2"], ["logits"], name="fc2_bias"),
        helper.make_node("Softmax", ["logits"], ["y"], name="softmax", axis=-1),
    ]
    inits = [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"))]
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        initializer=inits)
    model = helper.make_model(graph, producer_name="ferrite-examples",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "mlp.onnx")
    onnx.save(make_mlp(), out)
    print("wrote", out)


if __name__ == "__main__":
    main()
