#!/usr/bin/python3
"""New batch sizes, Ferrite against onnxruntime-node, side by side (issue 27's criterion: a
new batch size costs a compile). One session per engine, then for each batch size in turn
the first run at that size (what a server pays when a new size arrives) and a repeat. Each
round runs one Ferrite process (the Python module) and one onnxruntime-node process,
alternating which goes first; both are fed the same values and their output sums are
compared. Prints per-round numbers, then medians and ratios, and Ferrite's compile count.

    OMP_NUM_THREADS=1 /usr/bin/python3 tests/perf/batch_bench.py [--model build/models/mlp]
        [--batches 2,3,5,8,16,32,64] [--seq 16] [--rounds 5] [--threads 1]
        [--module build/native/python] [--ort-modules build/perf]
"""
import argparse
import os
import statistics
import sys

from decode_bench import run  # one process, its last line as JSON

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

FERRITE = r'''
import json, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
import ferrite
model, threads, batches = sys.argv[2], int(sys.argv[3]), [int(b) for b in sys.argv[4].split(",")]
seq = int(sys.argv[5])
options = ferrite.SessionOptions()
options.intra_op_num_threads = threads
t = time.perf_counter()
sess = ferrite.InferenceSession(model, options)
create = (time.perf_counter() - t) * 1e3
out = []
for n in batches:
    feeds = {}
    for i in sess.get_inputs():
        dims = [n] + [d if isinstance(d, int) else seq for d in i.shape[1:]]
        count = int(np.prod(dims))
        if i.type == "tensor(int64)":  # token ids, or a mask of ones
            v = np.ones(count) if "mask" in i.name else (np.arange(count) * 37) % 97
            feeds[i.name] = v.astype(np.int64).reshape(dims)
        else:
            feeds[i.name] = (((np.arange(count) * 37) % 19) / 9 - 1).astype(np.float32).reshape(dims)
    ms = []
    for _ in range(2):
        t = time.perf_counter()
        y = sess.run(None, feeds)[0]
        ms.append((time.perf_counter() - t) * 1e3)
    out.append({"batch": n, "first_ms": ms[0], "repeat_ms": ms[1], "sum": float(y.sum())})
print(json.dumps({"create_ms": create, "batches": out, "compiles": sess.compiles()}))
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=os.path.join(ROOT, "build", "models", "mlp"))
    ap.add_argument("--batches", default="2,3,5,8,16,32,64")
    ap.add_argument("--seq", type=int, default=16, help="the size of the other symbolic dims")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--module", default=os.path.join(ROOT, "build", "native", "python"))
    ap.add_argument("--ort-modules", default=os.path.join(ROOT, "build", "perf"))
    a = ap.parse_args()
    model = os.path.join(a.model, "model.onnx") if os.path.isdir(a.model) else a.model
    ferrite = [sys.executable, "-c", FERRITE, a.module, model, str(a.threads), a.batches,
               str(a.seq)]
    ort = ["node", os.path.join(HERE, "runners", "ort_batches.mjs"), "--modules", a.ort_modules,
           "--model", model, "--threads", str(a.threads), "--batches", a.batches,
           "--seq", str(a.seq)]
    results = {"ferrite": [], "ort": []}
    for r in range(a.rounds):
        order = [("ferrite", ferrite), ("ort", ort)]
        if r % 2:
            order.reverse()
        for name, cmd in order:
            results[name].append(run(cmd))
        for f, o in zip(results["ferrite"][-1]["batches"], results["ort"][-1]["batches"]):
            if abs(f["sum"] - o["sum"]) > 1e-3 * (1 + abs(o["sum"])):
                sys.exit(f"batch {f['batch']}: output sums differ ({f['sum']} vs {o['sum']})")
        fe, ot = results["ferrite"][-1], results["ort"][-1]
        print(f"round {r}: first run at a new size, median over sizes: ferrite "
              f"{statistics.median(b['first_ms'] for b in fe['batches']):7.3f} ms, "
              f"onnxruntime-node {statistics.median(b['first_ms'] for b in ot['batches']):7.3f} ms"
              f"; ferrite compiles {fe['compiles']}")

    print(f"medians over {a.rounds} rounds, {a.threads} thread(s); ratio = Ferrite / onnxruntime-node")
    fe_c = statistics.median(o["create_ms"] for o in results["ferrite"])
    ot_c = statistics.median(o["create_ms"] for o in results["ort"])
    print(f"  create ms     ferrite {fe_c:9.3f}  onnxruntime-node {ot_c:9.3f}  ratio {fe_c / ot_c:6.2f}")
    for i, n in enumerate(a.batches.split(",")):
        for key in ("first_ms", "repeat_ms"):
            fe = statistics.median(o["batches"][i][key] for o in results["ferrite"])
            ot = statistics.median(o["batches"][i][key] for o in results["ort"])
            print(f"  batch {n:>4s} {key:9s} ferrite {fe:9.3f}  onnxruntime-node {ot:9.3f}  "
                  f"ratio {fe / ot:6.2f}")


if __name__ == "__main__":
    main()
