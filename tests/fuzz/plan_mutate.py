#!/usr/bin/python3
"""Plan mutation tester: compiled plans are untrusted input (issue 25), so every change to one
must give a clean error or a result, on every backend, never a crash, a hang or a sanitizer
report.

It compiles seed models into plans (`ferrite compile`), changes the fields of each plan
(plan_format.py finds them: integers to boundary values, operand and buffer ids to other ids
and out of range, dtypes and enums to every value, index constants, ranges, strides and
offsets, extern attributes, floats to NaN and infinities; pairs of such changes; a buffer
resized together with the kernel args bound to it and the pool; byte flips; truncations) and runs each mutant with `ferrite-rt run` on each backend. Outcomes:
  ok       exit 0 (a changed plan may still be a valid one)
  error    exit 1 or 2 with one `error: ...` line on stderr
  BAD      anything else: a signal, another exit status, a sanitizer report ("runtime error:",
           "Sanitizer"), a dirty stderr, or no end within --timeout (a hang)
  SILENT   the jit ran a plan the reference refused as reading outside a buffer ("is outside
           its"), which generated code may have done unchecked (it is not instrumented by
           sanitizers); counted as BAD
Mutants of BAD outcomes are written to --keep (with a .txt saying what changed). Exits 1 when
any mutant was BAD.

  plan_mutate.py --cli build/native/bin/ferrite --cli-rt build/native/bin/ferrite-rt
                 [--backends "reference portable jit"] [--seeds MODEL.onnx|PLAN.fplan ...]
                 [--per-plan N] [--seed S] [--jobs J] [--timeout S] [--no-ulimit]
                 [--keep DIR] [--work DIR]
Under ASan: build/asan/bin/..., --no-ulimit (the shadow memory needs the address space).
"""
import argparse
import concurrent.futures as cf
import os
import random
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import plan_format as pf  # noqa: E402

NODE = "/usr/share/libonnx-testdata/data/node"
# Seeds covering every kind of step and field: masked loads (pads, concat, pools), gathers
# and index checks, reductions with inner loops, int64 and f16 storage, guards (If), and
# each extern (Conv, ConvTranspose, MatMul with an epilogue, Scatter*, TopK, SegmentReduce).
NODE_SEEDS = """maxpool_2d_pads averagepool_2d_pads constant_pad concat_2d_axis_0 slice gather_0
gathernd_example_int32 softmax_axis_1 layer_normalization_2d_axis0 reduce_sum_keepdims_example
argmax_default_axis_example lrn nllloss_NCd1_weight onehot_with_axis cumsum_1d
depthtospace_crd_mode tile expand_dim_changed where_example mod_mixed_sign_int64
cast_FLOAT_to_FLOAT16 resize_upsample_scales_nearest conv_with_strides_padding convtranspose
matmul_2d gemm_all_attributes einsum_batch_matmul scatter_elements_with_axis scatternd top_k
maxunpool_export_with_output_shape if range_float_type_positive_delta lstm_defaults""".split()
MODEL_SEEDS = ["mlp", "gcn", "graphsage"]

I32_MAX, I32_MIN = 2**31 - 1, -2**31
I64_MAX, I64_MIN = 2**63 - 1, -2**63


def default_seeds():
    seeds = [os.path.join(NODE, "test_" + n, "model.onnx") for n in NODE_SEEDS]
    seeds += [os.path.join(ROOT, "build", "models", m, "model.onnx") for m in MODEL_SEEDS]
    return [s for s in seeds if os.path.exists(s)]


def bounded(kind, values):
    lo, hi = {"u8": (0, 255), "u32": (0, 2**32 - 1), "i32": (I32_MIN, I32_MAX),
              "u64": (0, 2**64 - 1), "i64": (I64_MIN, I64_MAX)}.get(kind, (None, None))
    out = []
    for v in values:
        if kind == "f64" or lo <= v <= hi:
            if v not in out:
                out.append(v)
    return out


def candidates(f, plan, rng):
    """The values field f is tried with (its own value left out)."""
    v = f.value
    r = f.role
    ids = [-1, 0, 1, -2, 1000, I32_MAX, I32_MIN]
    if r == "ssa":
        vals = ids + [v - 1, v + 1, rng.randrange(0, 64)]
    elif r in ("instr_arg", "index_id", "small", "buffer"):
        vals = ids + [v - 1, v + 1, v + 2]
    elif r in ("op", "stype", "reduce", "index_kind", "buffer_kind", "step_kind"):
        n = {"op": len(pf.OPS), "stype": pf.SCALAR_TYPES, "reduce": pf.REDUCE_KINDS,
             "index_kind": pf.INDEX_KINDS, "buffer_kind": pf.BUFFER_KINDS,
             "step_kind": pf.STEP_KINDS}[r]
        vals = list(range(n)) + [n, 255]
        if r == "op":
            vals = rng.sample(vals, 12)
    elif r == "dtype":
        vals = list(pf.DTYPES) + [14, 255]
    elif r == "bool":
        vals = [0, 1, 2]
    elif r == "float":
        vals = [0.0, -0.0, float("nan"), float("inf"), float("-inf"), 1e30, -1.0, 2.0**63,
                v * 2 if v == v else 1.0]
    elif r == "version":
        vals = [0, pf.VERSION - 1, pf.VERSION + 1]
    elif r == "count":
        vals = [0, v + 1, v - 1, 2**31] if f.kind == "u32" else [v + 1, v - 1, 2**62]
    else:  # int64 quantities: ranges, elements, dims, strides, offsets, constants, attrs
        vals = [0, 1, -1, v + 1, v - 1, -v, 2 * v, v // 2, 2**31, 2**32, 2**44 + v, 2**62,
                I64_MAX, I64_MIN, I32_MAX]
        if r == "pool_offset":
            vals += [v + 64, v - 64, plan["pool_bytes"], plan["pool_bytes"] - 64]
        if r == "pool_bytes":
            vals += [v - 64, v + 64]
    vals = bounded(f.kind, vals)
    return [x for x in vals if not (x == v and (x == x))]


class Mutant:
    __slots__ = ("seed", "name", "data", "what")

    def __init__(self, seed, name, data, what):
        self.seed, self.name, self.data, self.what = seed, name, data, what


def resized(plan, fields, rng):
    """(changes, what) that give one buffer another dim and keep the plan consistent around
    it: the kernel args bound to it take its new size, the pool grows to hold it. What a
    kernel or extern does with the new size is then the backends' problem."""
    by_path = {f.path: f for f in fields}
    b = rng.randrange(len(plan["buffers"]))
    buf = plan["buffers"][b]
    if not buf["shape"]:
        return None
    d = rng.randrange(len(buf["shape"]))
    old = buf["shape"][d]
    new = rng.choice([old + 1, old - 1, 2 * old, old // 2, 1, 0, old + 64])
    if new < 0 or new == old:
        return None
    changes = [(by_path[f"buffers[{b}].shape[{d}]"], new)]
    elements = 1
    for i, n in enumerate(buf["shape"]):
        elements *= new if i == d else n
    for st in plan["steps"]:
        if st["kind"] != 0 or not 0 <= st["index"] < len(plan["kernels"]):
            continue
        for a, bound in enumerate(st["buffers"]):
            f = by_path.get(f"kernels[{st['index']}].args[{a}].elements")
            if bound == b and f:
                changes.append((f, elements))
    if buf["kind"] == 3:
        size = {1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8,
                16: 2}.get(buf["dtype"], 4)
        end = buf["offset"] + elements * size
        if end > plan["pool_bytes"]:
            changes.append((by_path["pool_bytes"], (end + 63) // 64 * 64))
    return changes, f"buffers[{b}] ('{buf['name']}') dim {d}: {old} -> {new}, and its users"


def mutants_of(seed, data, per_plan, rng):
    plan, fields = pf.parse(data)
    singles = []
    for f in fields:
        if f.role == "count" and rng.random() < 0.7:
            continue  # counts mostly give truncation errors: fewer of them
        for v in candidates(f, plan, rng):
            singles.append((f, v))
    rng.shuffle(singles)
    out = []
    budget_single = per_plan * 7 // 10
    for f, v in singles[:budget_single]:
        out.append(Mutant(seed, f"{f.path}={v!r}", pf.patch(data, [(f, v)]),
                          f"{f.path} {f.value!r} -> {v!r}"))
    for _ in range(per_plan // 10):
        r = resized(plan, fields, rng)
        if r:
            out.append(Mutant(seed, "resize", pf.patch(data, r[0]), r[1]))
    for _ in range(per_plan // 10):
        (f1, v1), (f2, v2) = rng.sample(singles, 2) if len(singles) > 1 else (singles[0],) * 2
        if f1.offset == f2.offset:
            continue
        out.append(Mutant(seed, f"{f1.path}={v1!r}+{f2.path}={v2!r}",
                          pf.patch(data, [(f1, v1), (f2, v2)]),
                          f"{f1.path} {f1.value!r} -> {v1!r}; {f2.path} {f2.value!r} -> {v2!r}"))
    for _ in range(per_plan - len(out)):
        if rng.random() < 0.8:
            pos = rng.randrange(12, len(data))
            b = bytearray(data)
            b[pos] ^= 1 << rng.randrange(8) if rng.random() < 0.5 else rng.randrange(1, 256)
            out.append(Mutant(seed, f"byte{pos}", bytes(b), f"byte {pos} changed"))
        else:
            cut = rng.randrange(0, len(data))
            out.append(Mutant(seed, f"cut{cut}", data[:cut], f"truncated to {cut} bytes"))
    return out


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))


def run_one(opts, path, backend, timeout=None):
    timeout = timeout or opts.timeout
    cmd = shlex.split(opts.runner) + [opts.cli_rt, "run", path, "--backend", backend]
    env = dict(os.environ, OMP_NUM_THREADS="1",
               ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=timeout, env=env,
                           preexec_fn=None if opts.no_ulimit else limit_memory)
    except subprocess.TimeoutExpired:
        return "BAD", f"no end within {timeout:.0f} s", time.monotonic() - t0
    took = time.monotonic() - t0
    err = p.stderr.decode("utf-8", "replace")
    if "Sanitizer" in err or "runtime error:" in err:
        return "BAD", "sanitizer: " + err[-2000:], took
    if p.returncode == 0:
        return "ok", "", took
    lines = err.splitlines()
    if p.returncode in (1, 2) and len(lines) == 1 and lines[0].startswith("error: "):
        return "error", lines[0], took
    return "BAD", f"exit {p.returncode}: {err[-2000:]}", took


def check_mutant(opts, m, tmp):
    path = os.path.join(tmp, f"m{abs(hash(m.name)) % 10**12}_{os.getpid()}_{id(m)}.fplan")
    with open(path, "wb") as f:
        f.write(m.data)
    try:
        # A mutant may run a step more than the plan did: time enough for a few plan runs.
        results = {b: run_one(opts, path, b, max(opts.timeout, 4 * opts.base_time[(m.seed, b)]))
                   for b in opts.backends}
    finally:
        os.unlink(path)
    ref = results.get("reference")
    jit = results.get("jit")
    if ref and jit and ref[0] == "error" and "is outside its" in ref[1] and jit[0] == "ok":
        results["jit"] = ("BAD", "SILENT: the reference refused a read outside a buffer ("
                          + ref[1] + "), the jit ran", 0)
    return m, results


def freeze_input(case, model, name, work):
    """A copy of `model` (case's model.onnx or a copy of it) whose input `name` is a constant,
    the value the ONNX test case feeds (so that a plan can be compiled ahead of time); None
    when there is no such value."""
    import onnx
    from onnx import numpy_helper
    names = [i.name for i in onnx.load(os.path.join(case, "model.onnx")).graph.input]
    if name not in names:
        return None
    pb = os.path.join(case, "test_data_set_0", f"input_{names.index(name)}.pb")
    if not os.path.exists(pb):
        return None
    t = onnx.TensorProto()
    with open(pb, "rb") as f:
        t.ParseFromString(f.read())
    m = onnx.load(model)
    m.graph.initializer.append(numpy_helper.from_array(numpy_helper.to_array(t), name))
    out = os.path.join(work, f"{os.path.basename(case)}_{name}.onnx")
    onnx.save(m, out)
    return out


def compile_seeds(opts, work):
    plans = []
    for s in opts.seeds:
        if s.endswith(".fplan"):
            plans.append((os.path.basename(s), s))
            continue
        name = os.path.basename(os.path.dirname(s)) or os.path.basename(s)
        out = os.path.join(work, name + ".fplan")
        model = s
        for _ in range(8):  # inputs that must be constants become the test case's values
            if os.path.exists(out):
                break
            p = subprocess.run([opts.cli, "compile", model, "-o", out], capture_output=True)
            err = p.stderr.decode(errors="replace").strip()
            m = re.search(r"input \d+ \('([^']*)'\) must be a compile-time constant", err)
            if p.returncode == 0 or not m:
                break
            model = freeze_input(os.path.dirname(s), model, m.group(1), work)
            if not model:
                break
        if not os.path.exists(out):
            print(f"skip {s}: {err}")
            continue
        plans.append((name, out))
    return plans


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--cli-rt", required=True)
    ap.add_argument("--backends", default="reference portable jit")
    ap.add_argument("--runner", default="")
    ap.add_argument("--seeds", nargs="*")
    ap.add_argument("--per-plan", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=20)
    ap.add_argument("--no-ulimit", action="store_true")
    ap.add_argument("--keep", default="plan_mutants_bad")
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "plan_mutate_work"))
    opts = ap.parse_args()
    opts.backends = opts.backends.split()
    opts.seeds = opts.seeds or default_seeds()
    os.makedirs(opts.work, exist_ok=True)
    rng = random.Random(opts.seed)
    plans = []
    opts.base_time = {}
    for name, path in compile_seeds(opts, opts.work):
        # Each seed's plan must run on every backend; its time scales the mutants' timeouts.
        runs = {b: run_one(opts, path, b, 600) for b in opts.backends}
        bad = [f"{b}: {r[1]}" for b, r in runs.items() if r[0] != "ok"]
        if bad:
            print(f"skip {name}: its plan does not run: {'; '.join(bad)[:300]}")
            continue
        opts.base_time.update({(name, b): r[2] for b, r in runs.items()})
        plans.append((name, path))
    mutants = []
    for name, path in plans:
        with open(path, "rb") as f:
            mutants += mutants_of(name, f.read(), opts.per_plan, rng)
    print(f"{len(plans)} plans, {len(mutants)} mutants, backends {' '.join(opts.backends)}",
          flush=True)
    counts = {b: {"ok": 0, "error": 0, "BAD": 0} for b in opts.backends}
    bad = []
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp, cf.ThreadPoolExecutor(opts.jobs) as ex:
        done = 0
        for m, results in ex.map(lambda m: check_mutant(opts, m, tmp), mutants):
            done += 1
            for b, (outcome, msg, _) in results.items():
                counts[b][outcome] += 1
                if outcome == "BAD":
                    bad.append((m, b, msg))
                    print(f"BAD {b} {m.seed}: {m.what}: {msg[:300]}", flush=True)
            if done % 500 == 0:
                print(f"... {done}/{len(mutants)} mutants, {time.monotonic() - t0:.0f} s",
                      flush=True)
    if bad:
        os.makedirs(opts.keep, exist_ok=True)
        for i, (m, b, msg) in enumerate(bad):
            base = os.path.join(opts.keep, f"bad{i:04d}_{m.seed}")
            with open(base + ".fplan", "wb") as f:
                f.write(m.data)
            with open(base + ".txt", "w") as f:
                f.write(f"seed {m.seed}\nchange {m.what}\nbackend {b}\n{msg}\n")
    print(f"mutants: {len(mutants)} from {len(plans)} plans in {time.monotonic() - t0:.0f} s")
    for b in opts.backends:
        c = counts[b]
        print(f"  {b:10s} ok {c['ok']:6d}  error {c['error']:6d}  BAD {c['BAD']:4d}")
    print(f"BAD: {len(bad)}" + (f" (kept in {opts.keep})" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
