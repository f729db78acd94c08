"""Synthetic ONNX graphs of N nodes (or N inputs, outputs, iterations) for compile_scaling.py.

Each family stresses one way a graph grows; every model is small in data ([4, 4] floats
and the like), so that the time goes to the compiler and the backends' preparation:

  relu      a chain of N Relu nodes: one pointwise kernel of N instructions
  mixed     a chain of N unary ops (Neg, Relu, Tanh, Abs, Sigmoid) in turn: the same, varied
  identity  a chain of N Identity nodes (removed by a graph pass)
  views     a chain of N views (Transpose, Reshape to 1-D, Reshape back) ending in a Relu
  addconst  a chain of N Adds of N distinct [4, 4] initializers: kernels merged by fusion
  matmul    N/3 layers of MatMul by a [4, 4] weight, Add of a bias, Relu: externs with epilogues
  concat    a Concat of N inputs of float[2]: one kernel of N masked loads
  split     a Split of float[N] into N outputs
  sum       a Sum of N inputs
  wide      N inputs, each through its own Relu to its own output
  if        a chain of N/2 If nodes on one run-time condition (Relu or Neg per branch)
  loop      a Loop of 1,000 iterations over a body of N/1,000 Relu and Add nodes
"""
import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

VI = helper.make_tensor_value_info
FAMILIES = ["relu", "mixed", "identity", "views", "addconst", "matmul", "concat", "split",
            "sum", "wide", "if", "loop"]


def _model(nodes, ins, outs, inits=()):
    g = helper.make_graph(nodes, "scaling", ins, outs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _chain(n, ops):
    nodes = [helper.make_node(ops[i % len(ops)], [f"t{i}"], [f"t{i + 1}"]) for i in range(n)]
    return _model(nodes, [VI("t0", TP.FLOAT, [4, 4])], [VI(f"t{n}", TP.FLOAT, [4, 4])])


def _views(n):
    nodes, cur = [], "x"
    shapes = [("Transpose", None), ("Reshape", "flat"), ("Reshape", "square")]
    inits = [numpy_helper.from_array(np.array([16], np.int64), "flat"),
             numpy_helper.from_array(np.array([4, 4], np.int64), "square")]
    for i in range(n):
        op, shape = shapes[i % 3]
        ins = [cur] if shape is None else [cur, shape]
        nodes.append(helper.make_node(op, ins, [f"v{i}"]))
        cur = f"v{i}"
    if n % 3 == 2:  # end on [4, 4]
        nodes.append(helper.make_node("Reshape", [cur, "square"], ["v_end"]))
        cur = "v_end"
    nodes.append(helper.make_node("Relu", [cur], ["y"]))
    return _model(nodes, [VI("x", TP.FLOAT, [4, 4])], [VI("y", TP.FLOAT, [4, 4])], inits)


def _addconst(n):
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.uniform(-1, 1, (4, 4)).astype(np.float32), f"c{i}")
             for i in range(n)]
    nodes = [helper.make_node("Add", [f"t{i}", f"c{i}"], [f"t{i + 1}"]) for i in range(n)]
    return _model(nodes, [VI("t0", TP.FLOAT, [4, 4])], [VI(f"t{n}", TP.FLOAT, [4, 4])], inits)


def _matmul(n):
    rng = np.random.default_rng(0)
    layers = max(1, n // 3)
    nodes, inits, cur = [], [], "x"
    for i in range(layers):
        w = rng.uniform(-0.5, 0.5, (4, 4)).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"),
                  numpy_helper.from_array(rng.uniform(-1, 1, 4).astype(np.float32), f"b{i}")]
        nodes += [helper.make_node("MatMul", [cur, f"w{i}"], [f"m{i}"]),
                  helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"]),
                  helper.make_node("Relu", [f"a{i}"], [f"r{i}"])]
        cur = f"r{i}"
    return _model(nodes, [VI("x", TP.FLOAT, [4, 4])], [VI(cur, TP.FLOAT, [4, 4])], inits)


def _concat(n):
    ins = [VI(f"x{i}", TP.FLOAT, [2]) for i in range(n)]
    node = helper.make_node("Concat", [f"x{i}" for i in range(n)], ["y"], axis=0)
    return _model([node], ins, [VI("y", TP.FLOAT, [2 * n])])


def _split(n):
    node = helper.make_node("Split", ["x"], [f"y{i}" for i in range(n)], axis=0)
    return _model([node], [VI("x", TP.FLOAT, [n])], [VI(f"y{i}", TP.FLOAT, [1]) for i in range(n)])


def _sum(n):
    node = helper.make_node("Sum", [f"x{i}" for i in range(n)], ["y"])
    return _model([node], [VI(f"x{i}", TP.FLOAT, [4]) for i in range(n)], [VI("y", TP.FLOAT, [4])])


def _wide(n):
    nodes = [helper.make_node("Relu", [f"x{i}"], [f"y{i}"]) for i in range(n)]
    return _model(nodes, [VI(f"x{i}", TP.FLOAT, [4]) for i in range(n)],
                  [VI(f"y{i}", TP.FLOAT, [4]) for i in range(n)])


def _if(n):
    nodes, cur = [], "x"
    for i in range(max(1, n // 2)):
        then = helper.make_graph([helper.make_node("Relu", [cur], [f"tr{i}"])], f"then{i}", [],
                                 [VI(f"tr{i}", TP.FLOAT, [4, 4])])
        other = helper.make_graph([helper.make_node("Neg", [cur], [f"el{i}"])], f"else{i}", [],
                                  [VI(f"el{i}", TP.FLOAT, [4, 4])])
        nodes.append(helper.make_node("If", ["c"], [f"i{i}"], then_branch=then, else_branch=other))
        cur = f"i{i}"
    return _model(nodes, [VI("x", TP.FLOAT, [4, 4]), VI("c", TP.BOOL, [])],
                  [VI(cur, TP.FLOAT, [4, 4])])


def _loop(n):
    iters, per = 1000, max(1, n // 1000)
    body_nodes, cur = [], "s_in"
    one = helper.make_tensor("one", TP.FLOAT, [], [0.5])
    body_nodes.append(helper.make_node("Constant", [], ["half"], value=one))
    for j in range(per):
        op = "Relu" if j % 2 == 0 else "Add"
        ins = [cur] if op == "Relu" else [cur, "half"]
        body_nodes.append(helper.make_node(op, ins, [f"b{j}"]))
        cur = f"b{j}"
    body_nodes.append(helper.make_node("Identity", ["cond_in"], ["cond_out"]))
    body = helper.make_graph(
        body_nodes, "body",
        [VI("iter", TP.INT64, []), VI("cond_in", TP.BOOL, []), VI("s_in", TP.FLOAT, [4, 4])],
        [VI("cond_out", TP.BOOL, []), VI(cur, TP.FLOAT, [4, 4])])
    inits = [numpy_helper.from_array(np.array(iters, np.int64), "trip"),
             numpy_helper.from_array(np.array(True), "cond")]
    node = helper.make_node("Loop", ["trip", "cond", "x"], ["y"], body=body)
    return _model([node], [VI("x", TP.FLOAT, [4, 4])], [VI("y", TP.FLOAT, [4, 4])], inits)


def make(family, n):
    """The model of `family` at size n (an onnx.ModelProto)."""
    if family == "relu":
        return _chain(n, ["Relu"])
    if family == "mixed":
        return _chain(n, ["Neg", "Relu", "Tanh", "Abs", "Sigmoid"])
    if family == "identity":
        return _chain(n, ["Identity"])
    makers = {"views": _views, "addconst": _addconst, "matmul": _matmul, "concat": _concat,
              "split": _split, "sum": _sum, "wide": _wide, "if": _if, "loop": _loop}
    if family not in makers:
        raise ValueError(f"unknown family {family!r} (one of {', '.join(FAMILIES)})")
    return makers[family](n)


def save(family, n, path):
    onnx.save(make(family, n), path)
