#!/usr/bin/python3
"""Differential test of Ferrite's model checking against onnx.checker (Debian's python3-onnx).

Mutates the ONNX 1.12 node-suite models (attributes added, dropped and retyped; inputs and
outputs added, dropped or emptied; graph input dtypes and shapes; value names; opset imports;
initializers), then runs `onnx.checker.check_model(m, full_check=True)` and `ferrite run` on
each mutant and counts
  invalid-ran   models the checker rejects that Ferrite runs with exit 0
  valid-refused models the checker accepts that Ferrite rejects with an error other than an
                unsupported op, type or feature
plus crashes and timeouts (which the regression suite owns). Mutants are deterministic (one
RNG per seed model and mutant number), so two builds compare mutant by mutant.

  tests/fuzz/checker_diff.py --cli build/native/bin/ferrite [--per-model 8] [--jobs 2]
      [--filter SUBSTR] [--tsv OUT.tsv] [--show OUTCOME|CLASS [--save DIR]]

The checker is python3-onnx 1.12's (run in a forked child: its shape inference crashes on
a few mutants), plus one rule ONNX checks since 1.13 (a graph output must be defined). The
summary groups the invalid-ran models by the checker's complaint and by mutation, and the
valid-refused ones by Ferrite's complaint, so a class Ferrite still accepts or refuses is
visible at a glance (see README, "Model checking", for the classes left to the compiler
and why). The default run (8 mutants of each of the 932 models) takes 15-25 minutes here.
"""
import argparse
import collections
import concurrent.futures
import copy
import os
import random
import re
import subprocess
import tempfile

import onnx
from onnx import AttributeProto, TensorProto, helper

SUITE = "/usr/share/libonnx-testdata/data/node"

ATTR_KINDS = [AttributeProto.FLOAT, AttributeProto.INT, AttributeProto.STRING,
              AttributeProto.FLOATS, AttributeProto.INTS, AttributeProto.TENSOR]
DTYPES = [TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT64, TensorProto.INT32,
          TensorProto.BOOL, TensorProto.UINT8, TensorProto.FLOAT16, TensorProto.INT8]


def make_attr(rng, name, kind):
    if kind == AttributeProto.FLOAT:
        return helper.make_attribute(name, rng.choice([0.5, -1.0, 2.0]))
    if kind == AttributeProto.INT:
        return helper.make_attribute(name, rng.choice([0, 1, -1, 2]))
    if kind == AttributeProto.STRING:
        return helper.make_attribute(name, rng.choice(["", "constant", "NOTSET"]))
    if kind == AttributeProto.FLOATS:
        return helper.make_attribute(name, [1.0, 2.0])
    if kind == AttributeProto.INTS:
        return helper.make_attribute(name, [rng.choice([0, 1, -1]), 1])
    return helper.make_attribute(name, helper.make_tensor("t", TensorProto.FLOAT, [1], [1.0]))


def retype(rng, a):
    """The attribute with the same name and a different type (its value carried over)."""
    kinds = [k for k in ATTR_KINDS if k != a.type]
    kind = rng.choice(kinds)
    value = helper.get_attribute_value(a)
    scalar = value[0] if isinstance(value, list) and value else value
    try:
        if kind == AttributeProto.INT and isinstance(scalar, (int, float)):
            return helper.make_attribute(a.name, int(scalar))
        if kind == AttributeProto.FLOAT and isinstance(scalar, (int, float)):
            return helper.make_attribute(a.name, float(scalar))
        if kind == AttributeProto.INTS and isinstance(scalar, (int, float)):
            return helper.make_attribute(a.name, [int(scalar)])
        if kind == AttributeProto.FLOATS and isinstance(scalar, (int, float)):
            return helper.make_attribute(a.name, [float(scalar)])
    except (TypeError, ValueError, OverflowError):
        pass
    return make_attr(rng, a.name, kind)


def all_nodes(g):
    for n in g.node:
        yield n
        for a in n.attribute:
            if a.type == AttributeProto.GRAPH:
                yield from all_nodes(a.g)
            for sub in a.graphs:
                yield from all_nodes(sub)


def value_names(m):
    g = m.graph
    names = [i.name for i in g.input] + [t.name for t in g.initializer]
    for n in g.node:
        names += [o for o in n.output if o]
    return names


def mut_attr_add(rng, m):
    n = rng.choice(list(all_nodes(m.graph)))
    name = rng.choice(["foo", "axis", "axes", "alpha", "mode", "keepdims", "perm", "to"])
    if any(a.name == name for a in n.attribute):
        n.attribute.append(copy.deepcopy(next(a for a in n.attribute if a.name == name)))
        return f"attr_add_dup {n.op_type}.{name}"
    n.attribute.append(make_attr(rng, name, rng.choice(ATTR_KINDS)))
    return f"attr_add {n.op_type}.{name}"


def mut_attr_drop(rng, m):
    nodes = [n for n in all_nodes(m.graph) if n.attribute]
    if not nodes:
        return None
    n = rng.choice(nodes)
    i = rng.randrange(len(n.attribute))
    name = n.attribute[i].name
    del n.attribute[i]
    return f"attr_drop {n.op_type}.{name}"


def mut_attr_retype(rng, m):
    nodes = [n for n in all_nodes(m.graph) if n.attribute]
    if not nodes:
        return None
    n = rng.choice(nodes)
    i = rng.randrange(len(n.attribute))
    new = retype(rng, n.attribute[i])
    n.attribute[i].CopyFrom(new)
    return f"attr_retype {n.op_type}.{new.name}"


def mut_attr_typefield(rng, m):
    nodes = [n for n in all_nodes(m.graph) if n.attribute]
    if not nodes:
        return None
    n = rng.choice(nodes)
    a = rng.choice(list(n.attribute))
    a.type = rng.choice([AttributeProto.UNDEFINED] + [k for k in ATTR_KINDS if k != a.type])
    return f"attr_typefield {n.op_type}.{a.name}"


def mut_inputs(rng, m):
    n = rng.choice(list(m.graph.node))
    names = value_names(m)
    choice = rng.randrange(4)
    if choice == 0:
        n.input.append(rng.choice(names))
        return f"input_add {n.op_type}"
    if choice == 1 and n.input:
        del n.input[-1]
        return f"input_drop {n.op_type}"
    if choice == 2 and n.input:
        n.input[rng.randrange(len(n.input))] = ""
        return f"input_empty {n.op_type}"
    if n.input:
        n.input[rng.randrange(len(n.input))] = rng.choice(names)
        return f"input_swap {n.op_type}"
    return None


def mut_outputs(rng, m):
    n = rng.choice(list(m.graph.node))
    choice = rng.randrange(3)
    if choice == 0:
        n.output.append(n.output[-1] + "_extra" if n.output else "extra")
        return f"output_add {n.op_type}"
    if choice == 1 and len(n.output) > 0:
        n.output[rng.randrange(len(n.output))] = ""
        return f"output_empty {n.op_type}"
    if n.output:
        n.output[-1] = rng.choice(value_names(m))
        return f"output_dup {n.op_type}"
    return None


def graph_inputs(m):
    inits = {t.name for t in m.graph.initializer}
    return [i for i in m.graph.input if i.name not in inits and i.type.HasField("tensor_type")]


def mut_dtype(rng, m):
    ins = graph_inputs(m)
    if not ins:
        return None
    vi = rng.choice(ins)
    old = vi.type.tensor_type.elem_type
    vi.type.tensor_type.elem_type = rng.choice([d for d in DTYPES if d != old])
    return f"dtype {vi.name} {TensorProto.DataType.Name(old)}->" \
           f"{TensorProto.DataType.Name(vi.type.tensor_type.elem_type)}"


def mut_shape(rng, m):
    ins = graph_inputs(m)
    if not ins:
        return None
    vi = rng.choice(ins)
    dims = vi.type.tensor_type.shape.dim
    choice = rng.randrange(3)
    if choice == 0 and len(dims):
        d = dims[rng.randrange(len(dims))]
        d.dim_value = rng.choice([1, 2, 3, 7])
        return f"shape_dim {vi.name}"
    if choice == 1 and len(dims):
        del dims[-1]
        return f"shape_rank_down {vi.name}"
    dims.add().dim_value = rng.choice([1, 2])
    return f"shape_rank_up {vi.name}"


def mut_names(rng, m):
    choice = rng.randrange(3)
    if choice == 0:
        n = rng.choice(list(m.graph.node))
        if not n.input:
            return None
        n.input[rng.randrange(len(n.input))] = "undefined_name"
        return f"name_undefined {n.op_type}"
    if choice == 1 and len(m.graph.node) > 1:
        i = rng.randrange(len(m.graph.node) - 1)
        nodes = list(m.graph.node)
        nodes[i], nodes[i + 1] = nodes[i + 1], nodes[i]
        del m.graph.node[:]
        m.graph.node.extend(nodes)
        return "name_unsorted"
    out = rng.choice(list(m.graph.output))
    out.name = rng.choice(value_names(m) + ["undefined_output"])
    return "name_output"


def mut_opset(rng, m):
    choice = rng.randrange(4)
    op = m.opset_import[0] if m.opset_import else None
    if choice == 0 and op:
        op.version = rng.choice([1, 6, 7, 9, 11, 13])
        return f"opset_version {op.version}"
    if choice == 1 and op:
        m.opset_import.add().CopyFrom(op)
        m.opset_import[-1].version = max(1, op.version - 1)
        return "opset_duplicate"
    if choice == 2:
        del m.opset_import[:]
        return "opset_none"
    n = rng.choice(list(m.graph.node))
    n.domain = rng.choice(["ai.onnx.ml", "com.example"])
    return f"domain {n.domain}"


def mut_initializer(rng, m):
    if not m.graph.initializer:
        return mut_attr_retype(rng, m)
    t = rng.choice(list(m.graph.initializer))
    choice = rng.randrange(3)
    if choice == 0 and t.raw_data:
        t.raw_data = t.raw_data[:-1]
        return f"init_raw_short {t.name}"
    if choice == 1:
        t.dims.append(2)
        return f"init_dims {t.name}"
    t.data_type = rng.choice([d for d in DTYPES if d != t.data_type])
    return f"init_dtype {t.name}"


MUTATORS = [mut_attr_add, mut_attr_drop, mut_attr_retype, mut_attr_typefield, mut_inputs,
            mut_outputs, mut_dtype, mut_shape, mut_names, mut_opset, mut_initializer]

# The checker's complaint, reduced to a class.
CLASSES = [
    ("attr-unknown", r"Unrecognized attribute"),
    ("attr-type", r"Mismatched attribute type|type field and data field mismatch"),
    ("attr-required", r"Required attribute .* is missing"),
    ("attr-empty", r"is expected to have field"),
    ("attr-dup", r"appeared multiple times"),
    ("io-count", r"has (input|output) size|more (inputs|outputs)"),
    ("io-empty", r"marked single but has an empty string"),
    ("no-schema", r"No Op registered|No opset import|deprecated"),
    ("opset", r"opset_import|opset"),
    ("sorted", r"topologically sorted"),
    ("output-undefined", r"is not an output of any node"),
    ("ssa", r"static assignment|SSA"),
    ("tensor", r"TensorProto|data_type|one and only one value"),
    ("value-info", r"Field '(type|elem_type|shape)'"),
    ("type", r"TypeInferenceError|type mismatch|[Tt]ype .*(not|in)valid|elem type|"
             r"data type|Type Error|unsupported type|inconsistent type|type .* does not match"),
    ("checker-crash", r"onnx.checker crashed"),
    ("shape", r"ShapeInferenceError|[Ss]hape|rank|[Dd]imension"),
]


# Ferrite's complaint about a model the checker accepts.
FERRITE_CLASSES = [
    ("duplicate-opset (IR.md: an opset domain is unique)", r"imports .* twice"),
    ("element-type (onnx 1.12 misses variadic and opset-specific types)",
     r"needs both of one type|allows only"),
    ("declared-type of an input or constant (1.12 checks it only where a node reads it)",
     r"is declared .* \(a (graph input|constant)\)"),
    ("Constant without its value attribute", r"needs exactly one value attribute"),
    ("other model check", r"error: .*onnx:"),
    ("run-time value or shape", r"."),
]


def classify_ferrite(err):
    for name, pat in FERRITE_CLASSES:
        if re.search(pat, err):
            return name
    return "other"


def classify(msg):
    for name, pat in CLASSES:
        if re.search(pat, msg):
            return name
    return "other"


def newer_checker(m):
    """What onnx.checker checks since 1.13 and 1.12 does not: a graph output must be defined."""
    g = m.graph
    defined = {i.name for i in g.input} | {t.name for t in g.initializer}
    for n in g.node:
        defined.update(n.output)
    for o in g.output:
        if o.name not in defined:
            return f"Graph output '{o.name}' is not an output of any node in graph."
    return None


def checker_in_process(m):
    try:
        onnx.checker.check_model(m, full_check=True)
    except Exception as e:  # noqa: BLE001 - any complaint is a rejection
        return " ".join(str(e).split())[:300] or type(e).__name__
    return newer_checker(m) or ""


def checker_verdict(m):
    """The checker's complaint (None if it accepts), run in a forked child: onnx 1.12's
    shape inference itself crashes on some mutants, which then count as rejected."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.write(w, checker_in_process(m).encode()[:4000])
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        msg = f.read().decode("utf-8", "replace")
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return f"onnx.checker crashed (signal {os.WTERMSIG(status)})"
    return msg or None


def mutate(path, k):
    m = onnx.load(path)
    rng = random.Random(f"{os.path.basename(os.path.dirname(path))}/{k}")
    for _ in range(8):  # a mutator may not apply to this model: try another
        cand = copy.deepcopy(m)
        what = rng.choice(MUTATORS)(rng, cand)
        if what:
            return cand, what
    return None, None


UNSUPPORTED = re.compile(r"unsupported|not supported|is computed at run time|needs a constant")


def run_one(job):
    path, k, cli, backend, timeout = job
    m, what = mutate(path, k)
    if m is None:
        return None
    case = os.path.basename(os.path.dirname(path))
    verdict = checker_verdict(m)
    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "model.onnx")
        with open(f, "wb") as out:
            out.write(m.SerializeToString())
        try:
            p = subprocess.run([cli, "run", f, "--backend", backend], capture_output=True,
                               timeout=timeout, env=dict(os.environ, OMP_NUM_THREADS="1"))
            rc, err = p.returncode, p.stderr.decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            rc, err = "timeout", ""
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    err = lines[-1] if lines else " ".join(err.split())[:300]
    return case, k, what, verdict, rc, err


def outcome(verdict, rc, err):
    if rc == "timeout" or (isinstance(rc, int) and rc < 0):
        return "crash-or-timeout"
    if verdict and rc == 0:
        return "invalid-ran"
    if not verdict and rc != 0:
        return "valid-unsupported" if UNSUPPORTED.search(err) else "valid-refused"
    return "agree"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True, help="the ferrite tool")
    ap.add_argument("--suite", default=SUITE)
    ap.add_argument("--per-model", type=int, default=8, help="mutants per seed model")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--backend", default="reference")
    ap.add_argument("--timeout", type=float, default=20)
    ap.add_argument("--filter", default="", help="only seed cases containing this")
    ap.add_argument("--tsv", help="write every mutant's result here")
    ap.add_argument("--show", default="", help="print the mutants of this outcome or class")
    ap.add_argument("--save", metavar="DIR", help="write the mutants --show prints to DIR")
    opts = ap.parse_args()
    cases = sorted(c for c in os.listdir(opts.suite) if opts.filter in c)
    jobs = [(os.path.join(opts.suite, c, "model.onnx"), k, opts.cli, opts.backend,
             opts.timeout) for c in cases for k in range(opts.per_model)]
    results = []
    with concurrent.futures.ProcessPoolExecutor(opts.jobs) as ex:
        for r in ex.map(run_one, jobs, chunksize=4):
            if r:
                results.append(r)
    counts = collections.Counter()
    by_class = collections.Counter()
    by_mut = collections.Counter()
    by_ferrite = collections.Counter()
    tsv = open(opts.tsv, "w") if opts.tsv else None
    for case, k, what, verdict, rc, err in results:
        o = outcome(verdict, rc, err)
        counts[o] += 1
        cls = classify(verdict) if verdict else "-"
        if o == "invalid-ran":
            by_class[cls] += 1
            by_mut[what.split()[0]] += 1
        if o == "valid-refused":
            by_ferrite[classify_ferrite(err)] += 1
        if tsv:
            tsv.write(f"{case}\t{k}\t{what}\t{o}\t{cls}\t{verdict or 'ok'}\t{rc}\t{err}\n")
        if opts.show and opts.show in (o, cls):
            print(f"{case}#{k} {what}: {o}\n  checker: {verdict}\n  ferrite: rc={rc} {err}")
            if opts.save:
                os.makedirs(opts.save, exist_ok=True)
                onnx.save(mutate(os.path.join(opts.suite, case, "model.onnx"), k)[0],
                          os.path.join(opts.save, f"{case}_{k}.onnx"))
    rejected = sum(1 for r in results if r[3])
    print(f"mutants: {len(results)} (checker rejects {rejected}, accepts "
          f"{len(results) - rejected})")
    for o in ("invalid-ran", "valid-refused", "valid-unsupported", "crash-or-timeout", "agree"):
        print(f"  {o}: {counts[o]}")
    print("invalid-ran by checker complaint: " +
          ", ".join(f"{c} {n}" for c, n in by_class.most_common()))
    print("invalid-ran by mutation: " + ", ".join(f"{c} {n}" for c, n in by_mut.most_common()))
    print("valid-refused by Ferrite's complaint: " +
          ", ".join(f"{c} {n}" for c, n in by_ferrite.most_common()))


if __name__ == "__main__":
    main()
