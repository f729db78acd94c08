"""What the single-op checks share (contrib_check.py, quant_check.py): a case is one node
with its inputs and the numpy oracle's outputs; each is written as a model with
python3-onnx, run through the ferrite CLI on a backend, and every output compared: floats by
the largest absolute error relative to the largest |expected|, integers exactly."""
import os
import shlex
import subprocess

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"
ML = "ai.onnx.ml"

ONNX_TYPE = {np.dtype("float32"): TensorProto.FLOAT, np.dtype("int32"): TensorProto.INT32,
             np.dtype("int64"): TensorProto.INT64, np.dtype("int8"): TensorProto.INT8,
             np.dtype("uint8"): TensorProto.UINT8, np.dtype("int16"): TensorProto.INT16,
             np.dtype("uint16"): TensorProto.UINT16, np.dtype("float16"): TensorProto.FLOAT16,
             np.dtype("float64"): TensorProto.FLOAT}  # formulas in float64 check float32


def case(name, op, inputs, outputs, expected, domain=MS, opset=17, consts=(), **attrs):
    """inputs: [(name, array or None)]; expected: [array or None], one per output; the
    inputs named in `consts` are initializers (weights) instead of fed inputs."""
    return dict(name=name, op=op, inputs=inputs, outputs=outputs, expected=expected,
                domain=domain, opset=opset, consts=set(consts), attrs=attrs)


def write_model(c, path):
    names = [n if a is not None else "" for n, a in c["inputs"]]
    node = helper.make_node(c["op"], names, c["outputs"], domain=c["domain"], **c["attrs"])
    ins = [helper.make_tensor_value_info(n, ONNX_TYPE[a.dtype], list(a.shape))
           for n, a in c["inputs"] if a is not None and n not in c["consts"]]
    inits = [numpy_helper.from_array(a, n) for n, a in c["inputs"]
             if n in c["consts"] and a is not None]
    # Output types from the expected values (float32 where none is checked), so the models
    # load in onnxruntime too.
    outs = [helper.make_tensor_value_info(
                n, ONNX_TYPE[want.dtype] if want is not None else TensorProto.FLOAT, None)
            for n, want in zip(c["outputs"], c["expected"]) if n]
    graph = helper.make_graph([node], c["name"], ins, outs, initializer=inits)
    # An ai.onnx.ml case's `opset` (at most 5) is its domain's; the default domain's is 17.
    ml_case = c["domain"] == ML and c["opset"] <= 5
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17 if ml_case else c["opset"]), helper.make_opsetid(MS, 1),
        helper.make_opsetid(ML, c["opset"] if ml_case else 5)])
    model.ir_version = 8
    onnx.save(model, path)


def run(cli, path, feeds, out_dir, backend):
    cmd = shlex.split(cli) + ["run", path, "--output-dir", out_dir, "--backend", backend]
    for key, f in feeds.items():
        cmd += ["--input", f"{key}={f}"]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


def save_feeds(work, prefix, inputs):
    feeds = {}
    for n, arr in inputs:
        if arr is None:
            continue
        feeds[n] = os.path.join(work, f"{prefix}_{n}.npy")
        np.save(feeds[n], arr)
    return feeds


def check_case(cli, work, c, backend, tolerance):
    path = os.path.join(work, c["name"] + ".onnx")
    feeds = save_feeds(work, c["name"], [(n, a) for n, a in c["inputs"] if n not in c["consts"]])
    out_dir = os.path.join(work, f"{c['name']}_{backend}")
    os.makedirs(out_dir, exist_ok=True)
    write_model(c, path)
    r = run(cli, path, feeds, out_dir, backend)
    if r.returncode != 0:
        print(f"FAIL {c['name']} {backend}: ferrite exited {r.returncode}: {r.stderr.strip()}")
        return False
    worst = 0.0
    for out, want in zip(c["outputs"], c["expected"]):
        if want is None:
            continue
        got = np.load(os.path.join(out_dir, out + ".npy"))
        if got.shape != want.shape or (want.dtype.kind in "iu" and got.dtype != want.dtype):
            print(f"  {out}: {got.dtype}{got.shape}, expected {want.dtype}{want.shape}")
            return False
        if want.dtype.kind in "iu":
            if not np.array_equal(got, want):
                bad = np.argwhere(got != want)[0]
                print(f"  {out}: at {tuple(bad)} {got[tuple(bad)]}, expected {want[tuple(bad)]}"
                      f" ({int((got != want).sum())} differ)")
                worst = float("inf")
            continue
        scale = max(float(np.abs(want).max()), 1e-30) if want.size else 1.0
        err = float(np.abs(got.astype(np.float64) - want).max()) if want.size else 0.0
        worst = max(worst, err / scale)
    ok = worst <= tolerance
    print(f"{'ok  ' if ok else 'FAIL'} {c['name']} {backend}: max rel err {worst:.2e}")
    return ok


def check_error(cli, work, name, model, inputs, backend, must_name):
    """A model that must fail with an error line naming every string of `must_name`."""
    path = os.path.join(work, name + ".onnx")
    onnx.save(model, path)
    feeds = save_feeds(work, name, inputs)
    r = run(cli, path, feeds, os.path.join(work, name + "_out"), backend)
    ok = r.returncode != 0 and all(s in r.stderr for s in must_name)
    print(f"{'ok  ' if ok else 'FAIL'} {name} {backend}: exit {r.returncode}: "
          f"{r.stderr.strip()[:160]}")
    return ok
