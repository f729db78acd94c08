#!/usr/bin/python3
"""The segment-reduction kernel alone: Ferrite's SegmentReduce extern against PyTorch's
gather + index_add_ and its CSR sparse matmul, on one GCN aggregation
out[dst[e]] += w[e] * x[src[e]] over a random graph, same inputs, same machine.

    /usr/bin/python3 tests/perf/segment_bench.py [--nodes 10000] [--edges 200000]
        [--features 128,16] [--threads 1,2] [--rounds 5] [--runs 20]

Ferrite runs `ferrite run MODEL --profile --bench N` on a one-aggregation ONNX model
(Gather -> Mul -> ScatterElements(add), which fuse_message_passing makes one SegmentReduce)
and the kernel time is that extern's profile line (ms per run, its CSR sort cached after
the first run, as in repeated inference). PyTorch (one process per round, pinned to T
threads) times its two forms in that process; the rounds alternate Ferrite and PyTorch.
Medians over rounds; ratios are PyTorch / Ferrite (how many times faster Ferrite is).
Outputs are compared (max relative error printed). Needs python3-torch and a native build.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FERRITE = os.path.join(ROOT, "build", "native", "bin", "ferrite")

TORCH_SCRIPT = r"""
import json, sys, time, numpy as np, torch
d, threads, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
torch.set_num_threads(threads)
x = torch.from_numpy(np.load(d + "/x.npy")); w = torch.from_numpy(np.load(d + "/w.npy"))
src = torch.from_numpy(np.load(d + "/src.npy")); dst = torch.from_numpy(np.load(d + "/dst.npy"))
n = x.shape[0]
def index_add():
    return torch.zeros(n, x.shape[1]).index_add_(0, dst, x[src] * w.unsqueeze(1))
# The weighted adjacency as CSR (rows: destinations; duplicate edges summed, as CSR
# needs), built once, as a cached sort would be.
adj = torch.sparse_coo_tensor(torch.stack([dst, src]), w, (n, n)).coalesce().to_sparse_csr()
def csr():
    return torch.sparse.mm(adj, x) if hasattr(torch.sparse, "mm") else adj @ x
out = {}
for name, f in (("index_add", index_add), ("csr_spmm", csr)):
    try:
        y = f(); f()
        ts = []
        for _ in range(runs):
            t = time.perf_counter(); f(); ts.append((time.perf_counter() - t) * 1e3)
        np.save(d + "/torch_" + name + ".npy", y.to_dense().numpy() if y.is_sparse else y.numpy())
        out[name] = sorted(ts)[len(ts) // 2]
    except Exception as e:  # a torch build without CSR matmul on CPU
        out[name + "_error"] = str(e).splitlines()[0]
print(json.dumps(out))
"""


def make_model(path, nodes, edges, features):
    f = TensorProto.FLOAT
    g = helper.make_graph(
        [
            helper.make_node("Gather", ["x", "src"], ["m"], axis=0),
            helper.make_node("Unsqueeze", ["w", "one"], ["w1"]),
            helper.make_node("Mul", ["m", "w1"], ["mw"]),
            helper.make_node("Unsqueeze", ["dst", "one"], ["d1"]),
            helper.make_node("Expand", ["d1", "shape"], ["idx"]),
            helper.make_node("ScatterElements", ["zeros", "idx", "mw"], ["out"], axis=0,
                             reduction="add"),
        ],
        "aggregate",
        [helper.make_tensor_value_info("x", f, [nodes, features]),
         helper.make_tensor_value_info("src", TensorProto.INT64, [edges]),
         helper.make_tensor_value_info("dst", TensorProto.INT64, [edges]),
         helper.make_tensor_value_info("w", f, [edges])],
        [helper.make_tensor_value_info("out", f, [nodes, features])],
        [helper.make_tensor("one", TensorProto.INT64, [1], [1]),
         helper.make_tensor("shape", TensorProto.INT64, [2], [edges, features]),
         numpy_helper.from_array(np.zeros((nodes, features), np.float32), "zeros")],
    )
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)]), path)


def ferrite_ms(d, threads, runs):
    cmd = [FERRITE, "run", d + "/model.onnx", "--threads", str(threads), "--bench", str(runs),
           "--profile", "--output-dir", d + "/ferrite"]
    for name in ("x", "src", "dst", "w"):
        cmd += ["--input", f"{name}={d}/{name}.npy"]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit("segment_bench: ferrite failed:\n" + r.stdout + r.stderr)
    text = r.stdout
    lines = [l for l in text.splitlines() if "extern SegmentReduce" in l]
    if not lines:
        sys.exit("segment_bench: no SegmentReduce step in Ferrite's profile:\n" + text)
    return float(lines[0].split()[0])


def torch_ms(d, threads, runs):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
    r = subprocess.run([sys.executable, "-c", TORCH_SCRIPT, d, str(threads), str(runs)],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit("segment_bench: the PyTorch process failed:\n" + r.stderr)
    return json.loads(r.stdout.splitlines()[-1])


def rel_err(a, b):
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=10000)
    ap.add_argument("--edges", type=int, default=200000)
    ap.add_argument("--features", default="128,16")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=20)
    a = ap.parse_args()
    if not os.path.exists(FERRITE):
        sys.exit(f"segment_bench: {FERRITE} is missing (bash scripts/build.sh native ferrite)")
    rng = np.random.default_rng(7)
    print(f"graph: {a.nodes} nodes, {a.edges} edges (uniform random); load average "
          f"{os.getloadavg()[0]:.1f}; {a.rounds} rounds, {a.runs} runs each")
    print(f"{'F':>4} {'T':>2} {'ferrite ms':>10} {'torch index_add ms':>18} {'ratio':>6} "
          f"{'torch csr ms':>12} {'ratio':>6}  max rel err (index_add, csr)")
    with tempfile.TemporaryDirectory() as d:
        src = rng.integers(0, a.nodes, a.edges, dtype=np.int64)
        dst = rng.integers(0, a.nodes, a.edges, dtype=np.int64)
        w = rng.random(a.edges, dtype=np.float32)
        for name, v in (("src", src), ("dst", dst), ("w", w)):
            np.save(f"{d}/{name}.npy", v)
        for features in [int(v) for v in a.features.split(",")]:
            np.save(f"{d}/x.npy", rng.standard_normal((a.nodes, features), dtype=np.float32))
            make_model(d + "/model.onnx", a.nodes, a.edges, features)
            for threads in [int(v) for v in a.threads.split(",")]:
                fer, idx, csr = [], [], []
                for _ in range(a.rounds):
                    fer.append(ferrite_ms(d, threads, a.runs))
                    t = torch_ms(d, threads, a.runs)
                    idx.append(t.get("index_add", float("nan")))
                    csr.append(t.get("csr_spmm", float("nan")))
                f, i, c = (statistics.median(v) for v in (fer, idx, csr))
                got = np.load(d + "/ferrite/out.npy")
                errs = [rel_err(got, np.load(f"{d}/torch_{n}.npy")) if os.path.exists(
                    f"{d}/torch_{n}.npy") else float("nan") for n in ("index_add", "csr_spmm")]
                print(f"{features:>4} {threads:>2} {f:>10.3f} {i:>18.3f} {i / f:>6.1f} "
                      f"{c:>12.3f} {c / f:>6.1f}  {errs[0]:.1e}, {errs[1]:.1e}", flush=True)


if __name__ == "__main__":
    main()
