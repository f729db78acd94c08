#!/usr/bin/python3
"""Rewrites a float32 model into float16 the way onnxconverter-common's
convert_float_to_float16(model, keep_io_types=True) does (what onnxruntime's transformer
optimizer and most "fp16" exports use; the package is not installable here): every float32
initializer and Constant becomes float16 (values clamped into float16's finite range, tiny
non-zero ones to its smallest normal magnitude, as the converter clamps them), every Cast to
float32 casts to float16, so every activation is float16; the graph's float32 inputs are cast
to float16 where they enter and its float32 outputs cast back where they leave, so the model
is fed and read as before. Value infos of float32 values are dropped (the types follow).

    /usr/bin/python3 tests/models/quantize_float16.py IN.onnx OUT.onnx
"""
import argparse
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FP16_MAX = 65504.0
FP16_TINY = 5.96e-08  # onnxconverter-common's min_positive_val


def to_float16(t):
    """A float32 TensorProto as float16, clamped as the converter clamps."""
    a = numpy_helper.to_array(t).astype(np.float32)
    tiny = (a != 0) & (np.abs(a) < FP16_TINY)
    a = np.where(tiny, np.sign(a) * FP16_TINY, np.clip(a, -FP16_MAX, FP16_MAX))
    return numpy_helper.from_array(a.astype(np.float16), t.name)


def convert(model):
    g = model.graph
    count = 0
    for i, t in enumerate(g.initializer):
        if t.data_type == TensorProto.FLOAT:
            g.initializer[i].CopyFrom(to_float16(t))
            count += 1
    for n in g.node:
        for a in n.attribute:
            if n.op_type == "Constant" and a.name == "value" and a.t.data_type == TensorProto.FLOAT:
                a.t.CopyFrom(to_float16(a.t))
                count += 1
            if n.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = TensorProto.FLOAT16
    inits = {t.name for t in g.initializer}
    head, renamed = [], {}
    for i in g.input:
        if i.name in inits or i.type.tensor_type.elem_type != TensorProto.FLOAT:
            continue
        renamed[i.name] = i.name + "_fp16"
        head.append(helper.make_node("Cast", [i.name], [renamed[i.name]], to=TensorProto.FLOAT16,
                                     name=i.name + "_to_fp16"))
    for n in g.node:
        for k, name in enumerate(n.input):
            if name in renamed:
                n.input[k] = renamed[name]
    tail = []
    for o in g.output:
        if o.type.tensor_type.elem_type != TensorProto.FLOAT:
            continue
        inner = o.name + "_fp16"
        for n in g.node:
            for k, name in enumerate(n.output):
                if name == o.name:
                    n.output[k] = inner
            for k, name in enumerate(n.input):
                if name == o.name:
                    n.input[k] = inner
        tail.append(helper.make_node("Cast", [inner], [o.name], to=TensorProto.FLOAT,
                                     name=o.name + "_to_fp32"))
    nodes = head + list(g.node) + tail
    del g.node[:]
    g.node.extend(nodes)
    keep = [v for v in g.value_info if v.type.tensor_type.elem_type != TensorProto.FLOAT]
    del g.value_info[:]
    g.value_info.extend(keep)
    return count


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("out")
    a = ap.parse_args()
    model = onnx.load(a.model)
    count = convert(model)
    onnx.checker.check_model(model)
    onnx.save(model, a.out)
    print(f"{a.out}: {count} float32 constants made float16")


if __name__ == "__main__":
    sys.exit(main())
