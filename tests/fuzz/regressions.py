#!/usr/bin/python3
"""Every fuzz finding as a regression test (tests/fuzz/regressions/, listed in expect.tsv).

Each line of expect.tsv names a file (an ONNX model, or a compiled plan run by the
runtime-only tool), what must happen, and extra arguments:
  error   `run` exits 1 or 2 with exactly one stderr line, `error: ...`, free of control bytes
  agree   `run` exits 0 on every backend of the build, and the outputs agree with the
          reference backend's (same dtypes and shapes; floats within rtol 1e-4 and an atol
          of 1e-6 + 1e-4 x the output's largest finite magnitude, as the fuzz harness's
          differential.cc: a sum that cancels keeps the rounding error of terms at that
          scale; NaN equal to NaN, infinities exact; the rest exact)
  runs    `run` exits 0 on every backend; the outputs are not compared here (an ill-
          conditioned result, which the fuzz harness compares within the reference's own
          sensitivity to its inputs: differential.cc, within_sensitivity; ci.sh replays it)
  agree-float-sums
          the same, except that any infinity or NaN agrees: the model sums float32 products
          in a MatMul or Conv extern, with operands past sqrt(FLT_MAX), whose products
          overflow float32; the reference sums them in double and rounds once (an infinity
          of the sum's sign, or a finite value where they cancel), a float32 GEMM overflows
          as its order of partial sums decides (differential.cc's FloatSums::Huge)
Each run must end within --timeout seconds (a hang is a failure). Natively (not under a
sanitizer) runs get an 8 GB address-space limit, so that a model that allocates without
bound fails instead of taking the machine.

  regressions.py --cli ferrite --cli-rt ferrite-rt --backends "reference portable jit"
                 [--runner "node --no-experimental-fetch"] [--timeout S] [--no-ulimit]
                 [--filter SUBSTR]
"""
import argparse
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "regressions")


def read_expectations():
    cases = []
    with open(os.path.join(CASES, "expect.tsv")) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            cols = line.split("\t")
            name, expect = cols[0], cols[1]
            args = shlex.split(cols[2]) if len(cols) > 2 else []
            if expect not in ("error", "agree", "agree-float-sums", "runs"):
                sys.exit(f"expect.tsv: {name}: unknown expectation {expect!r}")
            cases.append((name, expect, args))
    listed = {c[0] for c in cases}
    for f in sorted(os.listdir(CASES)):
        if f.endswith((".onnx", ".fplan")) and f not in listed:
            sys.exit(f"expect.tsv does not list {f}")
    return cases


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))


def run(opts, tool, path, args, out_dir=None):
    cmd = shlex.split(opts.runner) + [tool, "run", path] + args
    if out_dir:
        cmd += ["--output-dir", out_dir]
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=opts.timeout,
                           preexec_fn=None if opts.no_ulimit else limit_memory)
    except subprocess.TimeoutExpired:
        return None, "", time.monotonic() - t0
    return p.returncode, p.stderr.decode("utf-8", "replace"), time.monotonic() - t0


def check_error(code, err):
    lines = err.splitlines()
    if code not in (1, 2):
        return f"exit status {code} (want 1 or 2); stderr: {err[-300:]!r}"
    if len(lines) != 1 or not lines[0].startswith("error: "):
        return f"stderr is not one `error:` line: {err[-300:]!r}"
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in lines[0]):
        return f"the error line holds control bytes: {lines[0]!r}"
    return None


def load_outputs(d):
    return {f: np.load(os.path.join(d, f)) for f in sorted(os.listdir(d)) if f.endswith(".npy")}


def compare(ref, got, float_sums=False):
    if sorted(ref) != sorted(got):
        return f"outputs {sorted(got)} vs reference {sorted(ref)}"
    for name in ref:
        a, b = ref[name], got[name]
        if a.dtype != b.dtype or a.shape != b.shape:
            return f"{name}: {b.dtype}{list(b.shape)} vs reference {a.dtype}{list(a.shape)}"
        if a.dtype.kind == "f":
            if float_sums and a.dtype == np.float32:
                b = np.where(~np.isfinite(b), a, b)
            finite = np.abs(a[np.isfinite(a)])
            scale = float(finite.max()) if finite.size else 0.0
            ok = np.isclose(b, a, rtol=1e-4, atol=1e-6 + 1e-4 * scale, equal_nan=True)
            if not ok.all():
                i = np.flatnonzero(~ok.ravel())[0]
                return f"{name}: element {i} is {b.ravel()[i]}, reference {a.ravel()[i]}"
        elif not np.array_equal(a, b):
            return f"{name}: differs from the reference"
    return None


def check_case(opts, name, expect, args):
    path = os.path.join(CASES, name)
    tool = opts.cli_rt if name.endswith(".fplan") else opts.cli
    if expect == "error":
        code, err, secs = run(opts, tool, path, args)
        if code is None:
            return f"no result after {opts.timeout} s"
        return check_error(code, err)
    ref = None
    for backend in opts.backends:
        with tempfile.TemporaryDirectory() as out:
            code, err, secs = run(opts, tool, path, args + ["--backend", backend], out)
            if code is None:
                return f"{backend}: no result after {opts.timeout} s"
            if code != 0:
                return f"{backend}: exit status {code}; stderr: {err[-300:]!r}"
            got = load_outputs(out)
        if not got:
            return f"{backend}: no outputs written"
        if ref is None or expect == "runs":
            ref = ref or got
            continue
        problem = compare(ref, got, expect == "agree-float-sums")
        if problem:
            return f"{backend}: {problem}"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--cli-rt", required=True)
    ap.add_argument("--backends", required=True, help="the first is the reference")
    ap.add_argument("--runner", default="")
    ap.add_argument("--timeout", type=float, default=20)
    ap.add_argument("--no-ulimit", action="store_true")
    ap.add_argument("--filter", default="")
    opts = ap.parse_args()
    opts.backends = opts.backends.split()
    failed = 0
    cases = [c for c in read_expectations() if opts.filter in c[0]]
    for name, expect, args in cases:
        t0 = time.monotonic()
        problem = check_case(opts, name, expect, args)
        secs = time.monotonic() - t0
        if problem:
            failed += 1
            print(f"FAIL {name} ({expect}, {secs:.1f} s): {problem}", flush=True)
        else:
            print(f"ok   {name} ({expect}, {secs:.1f} s)", flush=True)
    print(f"{len(cases) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
