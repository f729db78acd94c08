#!/usr/bin/python3
"""Rewrites a float32 model in onnxruntime's static QDQ form (its Python quantizer is not
installable here): every Conv and MatMul with float32 weights (initializers) reads its input
through QuantizeLinear -> DequantizeLinear (uint8, per tensor) and its weights through
DequantizeLinear of int8 weights (symmetric, per output channel: Conv's axis 0, MatMul's
columns), a Conv's bias as int32 scaled by x_scale * w_scale, and its output goes through
QuantizeLinear -> DequantizeLinear (uint8, per tensor) to its readers, a Relu or Clip after it
removed as onnxruntime's quantizer removes it. Activation ranges come
from running the float model on the calibration inputs with the ferrite CLI (every quantized
node's input and output made a graph output); each range includes 0.

    /usr/bin/python3 tests/models/quantize_static.py IN.onnx OUT.onnx --cli FERRITE \\
        --input NAME=FILE.npy [...]
"""
import argparse
import os
import shlex
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper

ACTIVATIONS = ("Relu", "Clip")


def quantizable(graph):
    inits = {t.name: t for t in graph.initializer}
    nodes = []
    for n in graph.node:
        w = inits.get(n.input[1]) if len(n.input) > 1 else None
        if w is None or w.data_type != onnx.TensorProto.FLOAT:
            continue
        if n.op_type == "Conv" or (n.op_type == "MatMul" and len(w.dims) == 2):
            nodes.append(n)
    return nodes, inits


def drop_activations(graph, targets):
    """As onnxruntime's quantizer does with asymmetric activations (QDQRemovableActivation):
    a Relu or Clip that alone reads a quantized product's output is removed, the product
    writing the activation's output, whose calibrated range (inside the activation's, and
    containing 0) then clamps as the activation did. Returns the positions of the removed
    nodes in graph.node."""
    readers = {}
    for i, n in enumerate(graph.node):
        for name in n.input:
            readers.setdefault(name, []).append(i)
    outputs = {o.name for o in graph.output}
    dropped = set()
    for n in targets:
        out = n.output[0]
        rs = readers.get(out, [])
        act = graph.node[rs[0]] if len(rs) == 1 else None
        if act is not None and act.op_type in ACTIVATIONS and act.input[0] == out and \
                out not in outputs:
            n.output[0] = act.output[0]
            dropped.add(rs[0])
    return dropped


def calibrate(model, names, cli, feeds):
    """min and max of each named value over one run of the float model."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    have = {o.name for o in m.graph.output}
    for name in names:
        if name not in have:
            m.graph.output.append(helper.make_empty_tensor_value_info(name))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "calibrate.onnx")
        onnx.save(m, path)
        cmd = shlex.split(cli) + ["run", path, "--output-dir", tmp]
        for k, f in feeds:
            cmd += ["--input", f"{k}={f}"]
        subprocess.run(cmd, check=True, capture_output=True)
        ranges = {}
        for name in names:
            v = np.load(os.path.join(tmp, name.replace("/", "_") + ".npy")) \
                if os.path.exists(os.path.join(tmp, name.replace("/", "_") + ".npy")) \
                else np.load(os.path.join(tmp, name + ".npy"))
            ranges[name] = (min(float(v.min()), 0.0), max(float(v.max()), 0.0))
        return ranges


def uint8_params(lo, hi):
    scale = np.float32((hi - lo) / 255.0 if hi > lo else 1.0)
    zero = np.uint8(np.clip(np.rint(-lo / scale), 0, 255))
    return scale, zero


class Rewriter:
    def __init__(self, model, ranges):
        self.g = model.graph
        self.ranges = ranges
        self.inits = {t.name: t for t in self.g.initializer}
        self.new_inits = []
        self.qdq_of = {}  # activation -> its dequantized copy

    def const(self, name, array):
        self.new_inits.append(numpy_helper.from_array(array, name))
        return name

    def qdq(self, name, nodes):
        """The name of `name` passed through QuantizeLinear -> DequantizeLinear."""
        if name in self.qdq_of:
            return self.qdq_of[name]
        scale, zero = uint8_params(*self.ranges[name])
        s = self.const(name + "_qs", np.array(scale))
        z = self.const(name + "_qz", np.array(zero))
        nodes.append(helper.make_node("QuantizeLinear", [name, s, z], [name + "_q"]))
        nodes.append(helper.make_node("DequantizeLinear", [name + "_q", s, z], [name + "_dq"]))
        self.qdq_of[name] = name + "_dq"
        return name + "_dq"

    def weights(self, n, nodes):
        w = numpy_helper.to_array(self.inits[n.input[1]])
        axis = 0 if n.op_type == "Conv" else 1
        top = np.abs(w).max(axis=tuple(d for d in range(w.ndim) if d != axis))
        scale = np.where(top > 0, top / 127.0, 1.0).astype(np.float32)
        shape = [1] * w.ndim
        shape[axis] = -1
        q = np.clip(np.rint(w / scale.reshape(shape)), -127, 127).astype(np.int8)
        p = n.input[1]
        nodes.append(helper.make_node(
            "DequantizeLinear",
            [self.const(p + "_w", q), self.const(p + "_ws", scale),
             self.const(p + "_wz", np.zeros(scale.shape, np.int8))], [p + "_wdq"], axis=axis))
        return p + "_wdq", scale

    def bias(self, n, x_scale, w_scale, nodes):
        b = numpy_helper.to_array(self.inits[n.input[2]])
        scale = (np.float32(x_scale) * w_scale).astype(np.float32)
        q = np.rint(b / scale).astype(np.int32)
        p = n.input[2]
        nodes.append(helper.make_node(
            "DequantizeLinear",
            [self.const(p + "_b", q), self.const(p + "_bs", scale),
             self.const(p + "_bz", np.zeros(scale.shape, np.int32))], [p + "_bdq"], axis=0))
        return p + "_bdq"

    def run(self, targets, dropped):
        targets = {id(n) for n in targets}
        out = []
        produced_by_target = {}
        for i, n in enumerate(self.g.node):
            if i in dropped:
                continue
            pre = []
            inputs = list(n.input)
            # Readers of a quantized node's output read its QDQ copy.
            for i, name in enumerate(inputs):
                if name in produced_by_target:
                    inputs[i] = self.qdq(name, pre)
            if id(n) in targets:
                x = self.qdq(n.input[0], pre)  # the float name: a quantized producer's too
                w, w_scale = self.weights(n, pre)
                inputs[0], inputs[1] = x, w
                if n.op_type == "Conv" and len(inputs) > 2 and inputs[2] in self.inits:
                    x_scale, _ = uint8_params(*self.ranges[n.input[0]])
                    inputs[2] = self.bias(n, x_scale, w_scale, pre)
                produced_by_target[n.output[0]] = True
            new = helper.make_node(n.op_type, inputs, list(n.output), name=n.name, domain=n.domain)
            new.attribute.extend(n.attribute)
            out += pre + [new]
        # Graph outputs produced by quantized nodes keep the float value.
        del self.g.node[:]
        self.g.node.extend(out)
        used = {i for n in out for i in n.input}
        keep = [t for t in self.g.initializer if t.name in used]
        del self.g.initializer[:]
        self.g.initializer.extend(keep + self.new_inits)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--cli", required=True, help="the ferrite CLI (for the calibration run)")
    ap.add_argument("--input", action="append", default=[], help="NAME=FILE.npy")
    a = ap.parse_args()
    model = onnx.load(a.model)
    original = onnx.ModelProto()
    original.CopyFrom(model)
    targets, _ = quantizable(model.graph)
    dropped = drop_activations(model.graph, targets)
    names = sorted({n.input[0] for n in targets} | {n.output[0] for n in targets})
    ranges = calibrate(original, names, a.cli, [f.split("=", 1) for f in a.input])
    Rewriter(model, ranges).run(targets, dropped)
    onnx.checker.check_model(model)
    onnx.save(model, a.out)
    print(f"{a.out}: {len(targets)} products quantized")


if __name__ == "__main__":
    sys.exit(main())
