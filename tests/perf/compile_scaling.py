#!/usr/bin/python3
"""Compile-time scaling: the time of every stage from model load to first run, per graph
family and size, and how it grows with the size.

For each family of compile_scaling_models.py and each N it writes the model, compiles it
with `ferrite compile` (import, graph passes, lowering, scheduling and fusion, plan
emission, memory planning, plan checks, serialization) and runs the plan with `ferrite-rt
run` on each backend (deserialization, Session::load with each backend's kernel
preparation, the first run), all with FERRITE_TIMINGS=1 and one thread, and prints per
stage the thread CPU milliseconds at each N and the growth ratio from one N to the next (a
stage linear in N grows by the same factor as N; n log n a little more; ratios are shown
for stages of 5 ms and more, and marked `!` above twice N's factor). CPU rather than wall
time, since the machine may be busy.

  compile_scaling.py [--cli build/native/bin/ferrite] [--cli-rt build/native/bin/ferrite-rt]
                     [--families relu,concat,...] [--sizes 1000,10000,100000]
                     [--backends "jit portable reference"] [--timeout 300] [--work DIR]
                     [--json FILE]
A size whose run times out (or fails) is reported so, and the family's larger sizes skipped.
"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compile_scaling_models as models  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MIN_MS_FOR_RATIO = 5.0


def run_timed(cmd, timeout):
    """Runs cmd with stage timings on; returns (ok, {stage: cpu_ms}, message)."""
    env = dict(os.environ, FERRITE_TIMINGS="1", OMP_NUM_THREADS="1")
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return False, {}, f"timeout after {timeout} s"
    wall = time.monotonic() - t0
    err = p.stderr.decode("utf-8", "replace")
    out = p.stdout.decode("utf-8", "replace")
    stages = {}
    for line in err.splitlines():
        parts = line.split()
        if len(parts) == 8 and parts[0] == "timing:" and parts[4] == "cpu":
            stages[parts[1]] = float(parts[5])
    for line in out.splitlines():
        if line.startswith("run_ms:"):
            stages["first_run (wall)"] = float(line.split()[1])
    stages["process (wall)"] = wall * 1e3
    if p.returncode != 0:
        return False, stages, f"exit {p.returncode}: {err.strip().splitlines()[-1:]}"
    return True, stages, ""


def measure(opts, family, n):
    """{stage: ms} for one model, stages of the runs prefixed with their backend."""
    path = os.path.join(opts.work, f"{family}_{n}.onnx")
    if not os.path.exists(path):
        models.save(family, n, path)
    plan = os.path.join(opts.work, f"{family}_{n}.fplan")
    ok, stages, why = run_timed([opts.cli, "compile", path, "-o", plan], opts.timeout)
    result = {f"compile:{k}": v for k, v in stages.items()}
    if not ok:
        return result, f"compile: {why}"
    for backend in opts.backends.split():
        ok, stages, why = run_timed([opts.cli_rt, "run", plan, "--backend", backend], opts.timeout)
        result.update({f"{backend}:{k}": v for k, v in stages.items()})
        if not ok:
            return result, f"{backend}: {why}"
    return result, ""


def fmt_ms(v):
    return "-" if v is None else (f"{v:.1f}" if v < 1e4 else f"{v:.0f}")


def report(family, sizes, results, failures):
    stages = []
    for n in sizes:
        for s in results.get(n, {}):
            if s not in stages:
                stages.append(s)
    head = f"{'stage (' + family + ', cpu ms)':44s}" + "".join(f"{'N=' + str(n):>11s}" for n in sizes)
    ratios = [f"{b // a}x N" for a, b in zip(sizes, sizes[1:])]
    print(head + "".join(f"{r:>11s}" for r in ratios))
    for s in stages:
        vals = [results.get(n, {}).get(s) for n in sizes]
        line = f"{s:44s}" + "".join(f"{fmt_ms(v):>11s}" for v in vals)
        for (a, b), (na, nb) in zip(zip(vals, vals[1:]), zip(sizes, sizes[1:])):
            if a is None or b is None or max(a, b) < MIN_MS_FOR_RATIO or a <= 0:
                line += f"{'':>11s}"
                continue
            r = b / a
            line += f"{r:10.1f}{'!' if r > 2 * nb / na else ' '}"
        print(line)
    for n, why in failures.items():
        print(f"  N={n}: {why}")
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=os.path.join(ROOT, "build/native/bin/ferrite"))
    ap.add_argument("--cli-rt", default=os.path.join(ROOT, "build/native/bin/ferrite-rt"))
    ap.add_argument("--families", default=",".join(models.FAMILIES))
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--backends", default="jit portable reference")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--work", default=os.path.join(ROOT, "build/perf/compile_scaling"))
    ap.add_argument("--json", help="also write {family: {N: {stage: ms}}} here")
    opts = ap.parse_args()
    os.makedirs(opts.work, exist_ok=True)
    sizes = [int(s) for s in opts.sizes.split(",")]
    everything = {}
    for family in opts.families.split(","):
        results, failures = {}, {}
        for n in sizes:
            results[n], why = measure(opts, family, n)
            if why:
                failures[n] = why
                break
        everything[family] = {"results": results, "failures": failures}
        report(family, sizes, results, failures)
        sys.stdout.flush()
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(everything, f, indent=1)


if __name__ == "__main__":
    main()
