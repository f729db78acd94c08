#!/usr/bin/python3
"""Times every unit of fuzz corpora natively, through `ferrite run`, on each backend.

libFuzzer names a slow unit only when it is slower than the slowest so far, so a campaign's
log misses units of 10-20 s that come after one of 25 s. This replays the corpora (models;
plans need --cli to be the runtime-only tool) one process per unit and backend, and lists
each run over --over seconds (a run past --timeout is killed and listed as such), slowest
first. Natively: no sanitizer, and the CLI's default limits unless --memory-limit is given,
so a plan too large for the fuzz harness's budget is computed as `ferrite run` computes it.
A model may ask for work in proportion to its size (a MatMul of 3G output elements writes
12 GB): with --memory-limit (the CLI's option; 2G, say) such models are refused at compile
and the runs left over --over seconds are those slow for their size.

  replay_times.py --cli build/native/bin/ferrite [--backends "jit portable"]
                  [--over 10] [--timeout 60] [--memory-limit SIZE] CORPUS_DIR...
"""
import argparse
import os
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--backends", default="jit portable")
    ap.add_argument("--over", type=float, default=10)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--memory-limit", help="passed to ferrite run")
    ap.add_argument("dirs", nargs="+")
    opts = ap.parse_args()
    files = sorted(os.path.join(d, f) for d in opts.dirs for f in os.listdir(d)
                   if os.path.isfile(os.path.join(d, f)))
    env = dict(os.environ, OMP_NUM_THREADS="1")
    slow = []
    t_all = time.monotonic()
    for path in files:
        for backend in opts.backends.split():
            t0 = time.monotonic()
            try:
                limit = ["--memory-limit", opts.memory_limit] if opts.memory_limit else []
                subprocess.run([opts.cli, "run", path, "--backend", backend] + limit, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               timeout=opts.timeout)
                secs = time.monotonic() - t0
                over = secs > opts.over
            except subprocess.TimeoutExpired:
                secs, over = opts.timeout, True
            if over:
                slow.append((secs, backend, path))
                print(f"{secs:7.1f} s  {backend:9s} {path}", flush=True)
    print(f"{len(files)} units x {len(opts.backends.split())} backends in "
          f"{time.monotonic() - t_all:.0f} s; over {opts.over:g} s: {len(slow)}")
    for secs, backend, path in sorted(slow, reverse=True):
        print(f"{secs:7.1f} s  {backend:9s} {path}")
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
