#!/usr/bin/python3
"""A greedy decode, Ferrite against onnxruntime-node, side by side (issue 27's per-token
criterion): the gpt_dyn test model, 64 steps from its prompt, each step a new past length.
Each round runs one Ferrite process (the Python module) and one onnxruntime-node process,
alternating which goes first; prints per-round numbers, then medians and ratios:
session creation, the median step, the whole decode, and peak RSS. Both check their tokens
against greedy_tokens.npy (PyTorch's).

    OMP_NUM_THREADS=1 /usr/bin/python3 tests/perf/decode_bench.py [--rounds 5] [--threads 1]
        [--models build/models] [--module build/native/python] [--ort-modules build/perf]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

FERRITE = r'''
import json, resource, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
import ferrite
case, threads, steps = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
options = ferrite.SessionOptions()
options.intra_op_num_threads = threads
t = time.perf_counter()
sess = ferrite.InferenceSession(case + "/model.onnx", options)
create = (time.perf_counter() - t) * 1e3
names = [i.name for i in sess.get_inputs()]
ids = np.load(case + "/greedy_prompt.npy")
past = [np.zeros((1, 4, 0, 64), np.float32) for _ in names[1:]]
step_ms, tokens = [], []
for _ in range(steps):
    t = time.perf_counter()
    logits, *past = sess.run(None, dict(zip(names, [ids, *past])))
    step_ms.append((time.perf_counter() - t) * 1e3)
    ids = logits[:, -1:].argmax(-1).astype(np.int64)
    tokens.append(int(ids[0, 0]))
print(json.dumps({"create_ms": create, "step_ms": step_ms, "tokens": tokens,
                  "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
'''


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    line = (p.stdout.strip().splitlines() or ["{}"])[-1]
    out = json.loads(line)
    if p.returncode != 0 or "error" in out:
        sys.exit(f"{cmd[0]} failed: {out.get('error') or p.stderr.strip()}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=64)
    ap.add_argument("--models", default=os.path.join(ROOT, "build", "models"))
    ap.add_argument("--module", default=os.path.join(ROOT, "build", "native", "python"))
    ap.add_argument("--ort-modules", default=os.path.join(ROOT, "build", "perf"))
    a = ap.parse_args()
    import numpy as np
    case = os.path.join(a.models, "gpt_dyn")
    want = np.load(os.path.join(case, "greedy_tokens.npy")).tolist()[:a.steps]
    ferrite = [sys.executable, "-c", FERRITE, a.module, case, str(a.threads), str(a.steps)]
    ort = ["node", os.path.join(HERE, "runners", "ort_decode.mjs"), "--modules", a.ort_modules,
           "--case", case, "--threads", str(a.threads), "--steps", str(a.steps)]
    results = {"ferrite": [], "ort": []}
    for r in range(a.rounds):
        order = [("ferrite", ferrite), ("ort", ort)]
        if r % 2:
            order.reverse()
        for name, cmd in order:
            out = run(cmd)
            if out["tokens"] != want:
                sys.exit(f"{name}: tokens differ from PyTorch's")
            results[name].append(out)
            print(f"round {r} {name:8s} create {out['create_ms']:7.1f} ms  step median "
                  f"{statistics.median(out['step_ms']):6.3f} ms  decode "
                  f"{sum(out['step_ms']):7.1f} ms  peak RSS {out['max_rss_mb']:6.1f} MB")

    def med(name, f):
        return statistics.median(f(o) for o in results[name])
    print(f"medians over {a.rounds} rounds, {a.steps} steps, {a.threads} thread(s); "
          "ratio = Ferrite / onnxruntime-node")
    for label, f in (("create ms", lambda o: o["create_ms"]),
                     ("step ms", lambda o: statistics.median(o["step_ms"])),
                     ("decode ms", lambda o: sum(o["step_ms"])),
                     ("peak RSS MB", lambda o: o["max_rss_mb"])):
        fe, ot = med("ferrite", f), med("ort", f)
        print(f"  {label:12s} ferrite {fe:9.3f}  onnxruntime-node {ot:9.3f}  ratio {fe / ot:6.2f}")


if __name__ == "__main__":
    main()
