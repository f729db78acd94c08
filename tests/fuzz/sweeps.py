#!/usr/bin/python3
"""One-change sweeps over the ONNX node tests: each variant changes one thing in one model
and runs it through `ferrite run`; every outcome but a result or a clean error is a finding.

  ranks  each graph input's declared shape: rank 0, no shape, its first dim dropped, a
         leading dim of 2 added, rank 9 (trailing 1s); as the fuzzer of issue 25 did
  attrs  each int attribute (and each ints attribute, all entries at once) of each node,
         subgraph nodes included, set to 0, -1, 2^31, 2^32, 2^62, INT64_MAX, INT64_MIN

  sweeps.py ranks|attrs --cli build/native/bin/ferrite [--jobs 2] [--timeout 10]
            [--filter SUBSTR[,SUBSTR...]] [--keep DIR] [--log FILE] [--runner "..."] [--no-ulimit]
            [--onnx-check]

Outcomes: ok (exit 0), error (exit 1 or 2 with one `error:` line), and the findings:
crash (a signal or another exit status), sanitizer (an ASan/UBSan report, from a
-fsanitize build), badmsg (exit 1/2 but not one clean `error:` line), hang (no result in
--timeout s). The summary gives the count of each; --keep writes each finding's model
there with a line in DIR/findings.tsv; --log writes every variant's outcome and last
stderr line to FILE (sorted, so that two runs diff). Runs get an 8 GB address-space limit unless
--no-ulimit (for sanitizer builds, which reserve more). --onnx-check also runs onnx's
checker (with strict shape inference) on each variant that ran: those it rejects are
counted as accepted_invalid and listed (candidates for a missing check, not failures:
the checker has gaps of its own).
"""
import argparse
import concurrent.futures
import copy
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time

import onnx
from onnx import AttributeProto

NODE_TESTS = "/usr/share/libonnx-testdata/data/node"
FINDINGS = ("crash", "sanitizer", "badmsg", "hang")
ATTR_VALUES = [("0", 0), ("-1", -1), ("2^31", 2**31), ("2^32", 2**32), ("2^62", 2**62),
               ("INT64_MAX", 2**63 - 1), ("INT64_MIN", -2**63)]


def models(filt):
    """The node tests whose name holds one of the comma-separated substrings of filt."""
    subs = filt.split(",")
    for name in sorted(os.listdir(NODE_TESTS)):
        path = os.path.join(NODE_TESTS, name, "model.onnx")
        if any(s in name for s in subs) and os.path.exists(path):
            yield name, path


def rank_variants(model):
    """(label, mutated model) for each declared input shape change."""
    inits = {t.name for t in model.graph.initializer}
    for i, inp in enumerate(model.graph.input):
        if inp.name in inits or not inp.type.HasField("tensor_type"):
            continue
        tt = inp.type.tensor_type
        dims = [d for d in tt.shape.dim] if tt.HasField("shape") else None
        changes = [("rank0", []), ("noshape", None)]
        if dims:
            changes.append(("drop_first", dims[1:]))
        if dims is not None:
            changes.append(("lead2", ["2"] + dims))
            changes.append(("rank9", dims + [1] * (9 - len(dims)) if len(dims) < 9 else dims))
        for label, new in changes:
            m = copy.deepcopy(model)
            t = m.graph.input[i].type.tensor_type
            t.ClearField("shape")
            if new is not None:
                t.shape.SetInParent()
                for d in new:
                    nd = t.shape.dim.add()
                    if isinstance(d, str):
                        nd.dim_value = int(d)
                    elif isinstance(d, int):
                        nd.dim_value = d
                    else:
                        nd.CopyFrom(d)
            yield f"input '{inp.name}' {label}", m


def graph_nodes(graph, path=()):
    """(path of (node index, attribute name) hops, node) for every node, subgraphs too."""
    for n_i, node in enumerate(graph.node):
        yield path + (n_i,), node
        for a in node.attribute:
            if a.type == AttributeProto.GRAPH:
                yield from graph_nodes(a.g, path + (n_i, a.name))


def find_node(graph, path):
    node = graph.node[path[0]]
    rest = path[1:]
    while rest:
        attr = next(a for a in node.attribute if a.name == rest[0])
        node = attr.g.node[rest[1]]
        rest = rest[2:]
    return node


def attr_variants(model):
    for path, node in list(graph_nodes(model.graph)):
        for a in node.attribute:
            if a.type not in (AttributeProto.INT, AttributeProto.INTS):
                continue
            if a.type == AttributeProto.INTS and not a.ints:
                continue
            for label, v in ATTR_VALUES:
                m = copy.deepcopy(model)
                attr = next(x for x in find_node(m.graph, path).attribute if x.name == a.name)
                if a.type == AttributeProto.INT:
                    attr.i = v
                else:
                    attr.ints[:] = [v] * len(attr.ints)
                # The node's place (index path) tells apart two nodes of one op type.
                where = ".".join(str(p) for p in path)
                yield f"{node.op_type}#{where}.{a.name}={label}", m


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))


def classify(code, err):
    if "runtime error:" in err or "AddressSanitizer" in err or "LeakSanitizer" in err:
        return "sanitizer"
    if code == 0:
        return "ok"
    if code in (1, 2):
        lines = err.splitlines()
        ok = len(lines) == 1 and lines[0].startswith("error: ")
        return "error" if ok else "badmsg"
    return "crash"


def run_one(opts, data, workdir, key):
    path = os.path.join(workdir, f"{key}.onnx")
    with open(path, "wb") as f:
        f.write(data)
    cmd = shlex.split(opts.runner) + [opts.cli, "run", path]
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=opts.timeout,
                           preexec_fn=None if opts.no_ulimit else limit_memory)
        code, err = p.returncode, p.stderr.decode("utf-8", "replace")
        outcome = classify(code, err)
    except subprocess.TimeoutExpired:
        code, err, outcome = None, "", "hang"
    if outcome not in FINDINGS:
        os.unlink(path)
    return outcome, code, err, path


def onnx_rejects(data):
    try:
        onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    except Exception as e:  # the checker raises several types
        why = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        # onnx 1.12 wants a shape field on every input; Ferrite reads none as rank 0.
        return None if "Field 'shape'" in why else why
    return None


def first_line(err):
    for line in err.splitlines():
        if "runtime error:" in line or "ERROR:" in line:
            return line.strip()
    return err.strip().splitlines()[-1] if err.strip() else ""


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kind", choices=["ranks", "attrs"])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--runner", default="")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=10)
    ap.add_argument("--filter", default="")
    ap.add_argument("--keep", default="")
    ap.add_argument("--log", default="")
    ap.add_argument("--no-ulimit", action="store_true")
    ap.add_argument("--onnx-check", action="store_true")
    opts = ap.parse_args()
    variants = rank_variants if opts.kind == "ranks" else attr_variants
    counts = {k: 0 for k in ("ok", "error") + FINDINGS}
    findings, accepted, log = [], [], []
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(opts.jobs) as pool:
        futures = {}
        for test, path in models(opts.filter):
            model = onnx.load(path)
            for label, m in variants(model):
                key = f"v{len(futures)}"
                data = m.SerializeToString()
                fut = pool.submit(run_one, opts, data, tmp, key)
                futures[fut] = (test, label, data if opts.onnx_check else None)
        for fut in concurrent.futures.as_completed(futures):
            test, label, data = futures[fut]
            outcome, code, err, path = fut.result()
            counts[outcome] += 1
            log.append(f"{test}\t{label}\t{outcome}\t{first_line(err)[:300]}\n")
            if outcome == "ok" and data is not None:
                why = onnx_rejects(data)
                if why:
                    accepted.append((test, label, why))
            if outcome in FINDINGS:
                findings.append((test, label, outcome, code, first_line(err), path))
        findings.sort()
        if opts.keep:
            os.makedirs(opts.keep, exist_ok=True)
            with open(os.path.join(opts.keep, "findings.tsv"), "w") as f:
                for i, (test, label, outcome, code, line, path) in enumerate(findings):
                    name = f"{opts.kind}_{i:04d}.onnx"
                    os.replace(path, os.path.join(opts.keep, name))
                    f.write(f"{name}\t{test}\t{label}\t{outcome}\t{code}\t{line}\n")
    if opts.log:
        with open(opts.log, "w") as f:
            f.writelines(sorted(log))
    for test, label, why in sorted(accepted):
        print(f"accepted_invalid {test}: {label}: {why[:200]}")
    for test, label, outcome, code, line, _ in findings:
        print(f"{outcome:9} {test}: {label} (exit {code}) {line[:200]}")
    total = sum(counts.values())
    extra = f", accepted_invalid {len(accepted)}" if opts.onnx_check else ""
    print(f"{opts.kind}: {total} variants in {time.monotonic() - t0:.0f} s: " +
          ", ".join(f"{k} {v}" for k, v in counts.items()) + extra)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
