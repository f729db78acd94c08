#!/usr/bin/python3
"""The GNN test models give the same bits with 1 and 2 threads.

Runs gcn and graphsage (exported by export_models.py into MODELS_DIR) through the ferrite
CLI on one backend with --threads 1 and --threads 2, on their test inputs, and compares the
outputs byte for byte: message passing (SegmentReduce) reduces each row on one thread in
edge order, so the thread count must not change a single bit. Prints one line per model;
exits 1 on a difference or a failed run.

  /usr/bin/python3 tests/models/threads_check.py --cli build/native/bin/ferrite
      --models build/models --backend jit --work DIR
"""
import argparse
import os
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_models import cli_feeds  # noqa: E402

MODELS = ("gcn", "graphsage")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", required=True, help="the ferrite command (may have a runner prefix)")
    ap.add_argument("--models", required=True, help="export_models.py's output directory")
    ap.add_argument("--backend", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    failed = False
    for name in MODELS:
        case = os.path.join(a.models, name)
        # One directory per backend: ctest runs the backends' checks side by side.
        work = os.path.join(a.work, a.backend, name)
        os.makedirs(work, exist_ok=True)
        feeds = cli_feeds(case, work)
        outs = {}
        for threads in (1, 2):
            out_dir = os.path.join(work, f"t{threads}")
            cmd = shlex.split(a.cli) + ["run", os.path.join(case, "model.onnx"), *feeds,
                                        "--backend", a.backend, "--threads", str(threads),
                                        "--output-dir", out_dir]
            r = subprocess.run(cmd, capture_output=True, text=True,
                               env=dict(os.environ, OMP_NUM_THREADS=str(threads)))
            if r.returncode != 0:
                print(f"FAIL {name} --threads {threads}: exit {r.returncode}\n{r.stderr}")
                failed = True
                break
            outs[threads] = {f: open(os.path.join(out_dir, f), "rb").read()
                             for f in sorted(os.listdir(out_dir))}
        if len(outs) < 2:
            continue
        same = outs[1] == outs[2] and outs[1]
        print(f"{'ok  ' if same else 'FAIL'} {name} ({a.backend}): outputs with 1 and 2 threads "
              f"{'bit-identical' if same else 'differ'}")
        failed |= not same
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
