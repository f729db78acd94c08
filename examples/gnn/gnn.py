#!/usr/bin/python3
"""Graph neural networks on Ferrite: a 2-layer GCN and a 2-layer GraphSAGE (mean
aggregation) on a random graph of 10,000 nodes and 200,000 edges, exported from PyTorch to
ONNX, run by Ferrite and by PyTorch eager, with the times and the outputs compared.

    bash examples/gnn/run.sh            # installs and builds what is missing, then this
    /usr/bin/python3 examples/gnn/gnn.py [--runs 20] [--out build/examples/gnn]

PyTorch exports message passing (scatter_add_) as Gather -> Mul -> ScatterElements(add).
Ferrite's fuse_message_passing pass turns each such chain into one SegmentReduce: the
edges sorted by destination once (and kept while edge_index stays the same), then each
node's messages summed by one thread, without atomics. `--dump DIR` on the `ferrite run`
line below shows the pass at work (DIR/0*_fuse_message_passing.txt).
"""
import argparse
import os
import statistics
import subprocess
import sys
import time
import zlib

import numpy as np
import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FERRITE = os.path.join(ROOT, "build", "native", "bin", "ferrite")
# The models are the ones the tests check (tests/models/torch_models.py: GCN, GraphSAGE).
sys.path.insert(0, os.path.join(ROOT, "tests", "models"))
from export_models import cli_feeds, export_case  # noqa: E402
from torch_models import MODELS  # noqa: E402


def ferrite(model_dir, threads, runs):
    """Runs the model on Ferrite; returns (median ms, output array)."""
    inputs = cli_feeds(model_dir, model_dir)  # x.npy, edge_index.npy
    out_dir = os.path.join(model_dir, f"ferrite_t{threads}")
    cmd = [FERRITE, "run", os.path.join(model_dir, "model.onnx"), *inputs, "--threads",
           str(threads), "--bench", str(runs), "--output-dir", out_dir]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"ferrite failed:\n{r.stdout}{r.stderr}")
    median = float(r.stdout.split("median_ms:")[1].split()[0])
    return median, np.load(os.path.join(out_dir, "out.npy"))


def torch_eager(name, threads, runs):
    """The same module and inputs as the export (same seed); returns (median ms, output)."""
    torch.set_num_threads(threads)
    torch.manual_seed(zlib.crc32(name.encode()))
    case = MODELS[name]()
    args = case.input_sets[0]
    times = []
    with torch.no_grad():
        out = case.module(*args)
        case.module(*args)
        for _ in range(runs):
            start = time.perf_counter()
            case.module(*args)
            times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), out.numpy()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20, help="timed runs per engine (default 20)")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "examples", "gnn"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    print(f"{'model':<10} {'threads':>7} {'ferrite ms':>10} {'torch ms':>9} {'speed-up':>8}"
          f"  max rel err vs torch")
    for name in ("gcn", "graphsage"):
        torch.set_num_threads(1)
        export_case(name, a.out)  # model.onnx and its inputs/outputs
        model_dir = os.path.join(a.out, name)
        outputs = {}
        for threads in (1, 2):
            f_ms, f_out = ferrite(model_dir, threads, a.runs)
            t_ms, t_out = torch_eager(name, threads, a.runs)
            err = float(np.max(np.abs(f_out - t_out)) / np.max(np.abs(t_out)))
            outputs[threads] = f_out
            print(f"{name:<10} {threads:>7} {f_ms:>10.2f} {t_ms:>9.1f} {t_ms / f_ms:>7.1f}x"
                  f"  {err:.1e}", flush=True)
        same = np.array_equal(outputs[1].view(np.uint32), outputs[2].view(np.uint32))
        print(f"{name:<10} ferrite's outputs with 1 and 2 threads are "
              f"{'bit-identical' if same else 'DIFFERENT'}")
        if not same:
            sys.exit(1)
    print(f"(models and outputs in {a.out}; machine load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
