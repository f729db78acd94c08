#!/usr/bin/python3
"""Rewrites a float32 model the way onnxruntime's quantize_dynamic does (its Python quantizer
is not installable here): every MatMul by a 2-D float32 weight (an initializer), and every Gemm
by one, becomes

    DynamicQuantizeLinear(A) -> MatMulInteger(A_q, W_q, A_zero_point, W_zero_point)
    -> Cast(float) -> Mul(A_scale * W_scale) [-> Add(bias)]

with W quantized to int8, symmetrically (zero point 0), per tensor or (--per-column) per
output column, scale max|W| / 127; an activation that several products read is quantized
once (as onnxruntime's quantizer does). The rest of the graph is unchanged.

    /usr/bin/python3 tests/models/quantize_dynamic.py IN.onnx OUT.onnx [--per-column]
"""
import argparse
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def quantize_weight(w, per_column):
    """int8 codes and float32 scales (per column: [N]) of a [K, N] weight."""
    top = np.abs(w).max(axis=0) if per_column else np.array(np.abs(w).max())
    scale = np.where(top > 0, top / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
    return q, scale


class Rewriter:
    def __init__(self, model, per_column):
        self.graph = model.graph
        self.per_column = per_column
        self.inits = {t.name: t for t in self.graph.initializer}
        self.new_inits = []
        self.count = 0
        self.quantized = {}  # activation -> (A_q, A_scale, A_zero_point)

    def weight(self, name, transposed):
        t = self.inits.get(name)
        if t is None or t.data_type != TensorProto.FLOAT or len(t.dims) != 2:
            return None
        w = numpy_helper.to_array(t)
        return w.T if transposed else w

    def rewrite(self, node, a, w, bias, out):
        p = f"{node.name or node.output[0]}_dynq{self.count}"
        self.count += 1
        q, scale = quantize_weight(w, self.per_column)
        zp = np.zeros(scale.shape, np.int8)
        self.new_inits += [numpy_helper.from_array(q, p + "_W"),
                           numpy_helper.from_array(scale, p + "_Ws"),
                           numpy_helper.from_array(zp, p + "_Wz")]
        nodes = []
        if a not in self.quantized:
            self.quantized[a] = (p + "_Aq", p + "_As", p + "_Az")
            nodes.append(helper.make_node("DynamicQuantizeLinear", [a], list(self.quantized[a])))
        aq, a_scale, az = self.quantized[a]
        nodes += [
            helper.make_node("MatMulInteger", [aq, p + "_W", az, p + "_Wz"], [p + "_Y32"]),
            helper.make_node("Cast", [p + "_Y32"], [p + "_Yf"], to=TensorProto.FLOAT),
            helper.make_node("Mul", [a_scale, p + "_Ws"], [p + "_S"]),
        ]
        mul_out = out if bias is None else p + "_Ym"
        nodes.append(helper.make_node("Mul", [p + "_Yf", p + "_S"], [mul_out]))
        if bias is not None:
            nodes.append(helper.make_node("Add", [mul_out, bias], [out]))
        return nodes

    def node(self, n):
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        if n.op_type == "MatMul":
            w = self.weight(n.input[1], False)
            if w is not None:
                return self.rewrite(n, n.input[0], w, None, n.output[0])
        if n.op_type == "Gemm" and not attrs.get("transA", 0) and attrs.get("alpha", 1.0) == 1.0 \
                and attrs.get("beta", 1.0) == 1.0:
            w = self.weight(n.input[1], bool(attrs.get("transB", 0)))
            if w is not None:
                bias = n.input[2] if len(n.input) > 2 and n.input[2] else None
                return self.rewrite(n, n.input[0], w, bias, n.output[0])
        return [n]

    def run(self):
        nodes = [m for n in self.graph.node for m in self.node(n)]
        del self.graph.node[:]
        self.graph.node.extend(nodes)
        used = {i for n in nodes for i in n.input}
        keep = [t for t in self.graph.initializer if t.name in used]
        del self.graph.initializer[:]
        self.graph.initializer.extend(keep + self.new_inits)
        return self.count


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--per-column", action="store_true")
    a = ap.parse_args()
    model = onnx.load(a.model)
    count = Rewriter(model, a.per_column).run()
    if not any(o.domain in ("", "ai.onnx") and o.version >= 11 for o in model.opset_import):
        sys.exit("the model's opset is below 11 (DynamicQuantizeLinear)")
    onnx.checker.check_model(model)
    onnx.save(model, a.out)
    print(f"{a.out}: {count} products quantized")


if __name__ == "__main__":
    main()
