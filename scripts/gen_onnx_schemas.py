#!/usr/bin/env python3
"""Generates compiler/frontend/onnx/onnx_schemas_data.cc: ONNX's operator schemas as a table.

The source is ONNX's own operator changelog (docs/Changelog.md and docs/Changelog-ml.md of
the onnx/onnx repository), which lists every version of every operator with its attributes
(type, required or default), inputs and outputs (optional, variadic, heterogeneous), their
counts and the type constraints. Two facts the changelog omits come from the operator
definitions (onnx/defs/*.cc) of the same revision: the schemas that accept undeclared
attributes (AllowUncheckedAttributes: LayerNormalization-17) and sets of allowed output
counts (NumOutputs({1, 3}): BatchNormalization). Debian's python3-onnx (1.12) knows only opsets <= 17, so
the changelog of a newer ONNX is parsed instead; `--verify-python` checks the parser against
the schemas python3-onnx holds (every field the table keeps, for every schema both have).

  # the table from an onnx/onnx git directory (e.g. what the `fetch` tool brings):
  /usr/bin/python3 scripts/gen_onnx_schemas.py --git-dir DIR --rev REV \
      -o compiler/frontend/onnx/onnx_schemas_data.cc
  # the parser against python3-onnx 1.12 (its own changelog, rev rel-1.12.0):
  /usr/bin/python3 scripts/gen_onnx_schemas.py --git-dir DIR --rev rel-1.12.0 --verify-python
(0 mismatches. Against a newer changelog it shows what ONNX changed in place since 1.12:
in 1.23, Erf-13 no longer allows integers and GridSample-16's `grid` and `Y` swapped types.)

The table in the repository comes from the onnx/onnx snapshot at commit f7546912 (2026-08-22,
VERSION_NUMBER 1.23.0, the version the ONNX 1.23 node suite was generated at; the snapshot
has no v1.23.0 tag); the provenance is written at the top of the generated file.

More domains can be added as further `--changelog DOMAIN=FILE` sources in the changelog's
layout (the place for com.microsoft: onnxruntime's docs/ContribOperators.md is close to it,
but names its ops without versions, so it needs its own small reader first).
"""
import argparse
import re
import subprocess
import sys

# TensorProto.DataType numbers of the element types a `tensor(...)` may name.
ELEM_TYPES = {
    "float": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6, "int64": 7,
    "string": 8, "bool": 9, "float16": 10, "double": 11, "uint32": 12, "uint64": 13,
    "complex64": 14, "complex128": 15, "bfloat16": 16, "float8e4m3fn": 17,
    "float8e4m3fnuz": 18, "float8e5m2": 19, "float8e5m2fnuz": 20, "uint4": 21, "int4": 22,
    "float4e2m1": 23, "float8e8m0": 24, "uint2": 25, "int2": 26,
}
# Bits above the element types: the non-tensor kinds a constraint allows.
KIND_BITS = {"seq": 32, "optional": 33, "map": 34, "sparse_tensor": 35}

# AttributeProto.AttributeType numbers, by the changelog's wording.
ATTR_TYPES = {
    "float": 1, "int": 2, "string": 3, "tensor": 4, "graph": 5, "list of floats": 6,
    "list of ints": 7, "list of strings": 8, "list of tensors": 9, "list of graphs": 10,
    "sparse_tensor": 11, "list of sparse_tensors": 12, "type_proto": 13,
    "list of type_protos": 14,
}

SINGLE, OPTIONAL, VARIADIC = 0, 1, 2
INF = 2147483647

HEAD_RE = re.compile(r'^### <a name="([^"]+)-(\d+)"></a>\*\*([^*]+)-(\d+)\*\*')
DOMAIN_RE = re.compile(r"^# (\S+)")
OPSET_RE = re.compile(r"^## Version (\d+) of the (default ONNX|'([^']+)') operator set")
VERSION_RE = re.compile(r"has been (available|deprecated) since version (\d+) of")
COUNT_RE = re.compile(r"^#### (Inputs|Outputs) \((\d+) - (\d+|&#8734;)\)")
DT_RE = re.compile(r"^<dt><tt>([^<]+)</tt>(?: \(([^)]*)\))? : (.*)</dt>\s*$")
ATTR_TYPE_RE = re.compile(r"^(list of \w+|\w+)(?: \((required|default is .*)\))?$")


def split_types(s):
    """'tensor(float), map(int64, tensor(float))' -> the top-level comma-separated items."""
    out, depth, cur = [], 0, ""
    for c in s:
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        if c == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += c
    if cur.strip():
        out.append(cur.strip())
    return out


def type_mask(types):
    mask = 0
    for t in types:
        m = re.fullmatch(r"tensor\((\w+)\)", t)
        if m:
            if m.group(1) not in ELEM_TYPES:
                sys.exit(f"unknown element type in {t!r}")
            mask |= 1 << ELEM_TYPES[m.group(1)]
            continue
        kind = t.split("(", 1)[0]
        if kind not in KIND_BITS:
            sys.exit(f"unknown type {t!r}")
        mask |= 1 << KIND_BITS[kind]
    return mask


class Schema:
    def __init__(self, domain, name):
        self.domain, self.name = domain, name
        self.since, self.deprecated, self.unchecked_attrs = None, False, False
        self.output_counts = set()  # the allowed output counts, if the schema lists them
        self.attrs = []  # (name, type, required)
        self.inputs, self.outputs = [], []  # (name, option, homogeneous, type_str)
        self.counts = {}  # "Inputs"/"Outputs" -> (min, max) when the heading gives them
        self.constraints = []  # (name, [type strings])

    def io_range(self, which):
        params = self.inputs if which == "Inputs" else self.outputs
        if which in self.counts:
            return self.counts[which]
        # The changelog shows a range only when min != max.
        return len(params), len(params)


def parse_param(m, into):
    name, opts, type_str = m.group(1), m.group(2) or "", m.group(3)
    flags = [f.strip() for f in opts.split(",") if f.strip()]
    option = VARIADIC if "variadic" in flags else OPTIONAL if "optional" in flags else SINGLE
    into.append((name, option, "heterogeneous" not in flags, type_str.strip()))


def parse_attr(m, s):
    name, rest = m.group(1), m.group(3)
    a = ATTR_TYPE_RE.match(rest)
    if not a or a.group(1) not in ATTR_TYPES:
        sys.exit(f"{s.name}-{s.since}: cannot read attribute line {m.group(0)!r}")
    s.attrs.append((name, ATTR_TYPES[a.group(1)], a.group(2) == "required"))


def parse_changelog(text, default_domain, opsets):
    """The schemas of one changelog; `opsets` gets each domain's newest opset version."""
    schemas, cur, section = [], None, None
    domain = default_domain
    for line in text.splitlines():
        o = OPSET_RE.match(line)
        if o:
            dom = o.group(3) or ""
            opsets[dom] = max(opsets.get(dom, 0), int(o.group(1)))
            continue
        d = DOMAIN_RE.match(line)
        if d:
            domain = "" if d.group(1) == "ai.onnx" else d.group(1)
            cur = None
            continue
        h = HEAD_RE.match(line)
        if h:
            full = h.group(1)
            prefix = domain + "." if domain else ""
            if not full.startswith(prefix):
                sys.exit(f"schema {full} outside its domain {domain!r}")
            cur = Schema(domain, full[len(prefix):])
            schemas.append(cur)
            cur.since = int(h.group(2))
            section = None
            continue
        if cur is None:
            continue
        if line.startswith("#### "):
            section = line[5:].split(" (")[0].strip()
            c = COUNT_RE.match(line)
            if c:
                hi = INF if c.group(3) == "&#8734;" else int(c.group(3))
                cur.counts[c.group(1)] = (int(c.group(2)), hi)
            continue
        v = VERSION_RE.search(line)
        if v and section == "Version":
            cur.deprecated = v.group(1) == "deprecated"
            if int(v.group(2)) != cur.since:
                sys.exit(f"{cur.name}: heading says {cur.since}, text {v.group(2)}")
            continue
        m = DT_RE.match(line)
        if not m:
            continue
        if section == "Attributes":
            parse_attr(m, cur)
        elif section == "Inputs":
            parse_param(m, cur.inputs)
        elif section == "Outputs":
            parse_param(m, cur.outputs)
        elif section == "Type Constraints":
            cur.constraints.append((m.group(1), split_types(m.group(3))))
    return schemas


def read_source(args, path):
    if args.git_dir:
        return subprocess.run(["git", "--git-dir", args.git_dir, "show", f"{args.rev}:{path}"],
                              check=True, capture_output=True, text=True).stdout
    with open(path, encoding="utf-8") as f:
        return f.read()


MACRO_DOMAINS = {"ONNX_OPERATOR_SET_SCHEMA": "", "ONNX_ML_OPERATOR_SET_SCHEMA": "ai.onnx.ml",
                 "ONNX_PREVIEW_OPERATOR_SET_SCHEMA": "ai.onnx.preview",
                 "ONNX_PREVIEW_TRAINING_OPERATOR_SET_SCHEMA": "ai.onnx.preview.training"}
MACRO_RE = re.compile(r"\b(ONNX_\w*OPERATOR_SET_SCHEMA)\(\s*(\w+),\s*(\d+),")


def source_facts(args):
    """What the changelog does not show, from the operator definitions of the same revision:
    schemas that accept undeclared attributes (OpSchema::AllowUncheckedAttributes) and sets
    of allowed output counts (NumOutputs({1, 3})). (domain, name, since) -> facts."""
    facts = {}
    if not args.git_dir:
        return facts
    pattern = r"AllowUncheckedAttributes()\|NumOutputs({\|NumInputs({"
    hits = subprocess.run(["git", "--git-dir", args.git_dir, "grep", "-n", pattern, args.rev,
                           "--", "onnx/defs"], check=True, capture_output=True,
                          text=True).stdout.splitlines()
    for hit in hits:
        _, path, line, code = hit.split(":", 3)
        if not path.endswith(".cc") or path.endswith("schema.cc"):
            continue
        text = "\n".join(read_source(args, path).splitlines()[:int(line)])
        macros = [m for m in MACRO_RE.finditer(text) if m.group(1) in MACRO_DOMAINS]
        if not macros:
            sys.exit(f"{path}:{line}: {code.strip()} outside a schema definition")
        m = macros[-1]
        f = facts.setdefault((MACRO_DOMAINS[m.group(1)], m.group(2), int(m.group(3))), {})
        counts = re.search(r"Num(Inputs|Outputs)\(\{([\d, ]+)\}\)", code)
        if counts and counts.group(1) == "Outputs":
            f["outputs"] = {int(x) for x in counts.group(2).split(",")}
        elif counts:
            sys.exit(f"{path}:{line}: the table has no field for NumInputs sets")
        else:
            f["unchecked"] = True
    return facts


def load_all(args):
    opsets = {}
    schemas = parse_changelog(read_source(args, "docs/Changelog.md"), "", opsets)
    schemas += parse_changelog(read_source(args, "docs/Changelog-ml.md"), "ai.onnx.ml", opsets)
    for spec in args.changelog:
        dom, path = spec.split("=", 1)
        with open(path, encoding="utf-8") as f:
            schemas += parse_changelog(f.read(), dom, opsets)
    keys = set()
    for s in schemas:
        k = (s.domain, s.name, s.since)
        if k in keys:
            sys.exit(f"schema {k} listed twice")
        keys.add(k)
    facts = source_facts(args)
    for s in schemas:
        f = facts.get((s.domain, s.name, s.since), {})
        s.unchecked_attrs = f.get("unchecked", False)
        s.output_counts = f.get("outputs", set())
    if set(facts) - keys:
        sys.exit(f"definitions of schemas the changelog lacks: {set(facts) - keys}")
    return sorted(schemas, key=lambda s: (s.domain, s.name, s.since)), opsets


def verify_python(schemas):
    """Compares every parsed field with python3-onnx's schemas; returns the mismatch count."""
    import onnx.defs as defs
    opt = {defs.OpSchema.FormalParameterOption.Single: SINGLE,
           defs.OpSchema.FormalParameterOption.Optional: OPTIONAL,
           defs.OpSchema.FormalParameterOption.Variadic: VARIADIC}
    ours = {(s.domain, s.name, s.since): s for s in schemas}
    bad = checked = 0
    for p in defs.get_all_schemas_with_history():
        dom = "" if p.domain in ("", "ai.onnx") else p.domain
        s = ours.get((dom, p.name, p.since_version))
        if s is None:
            if dom in ("", "ai.onnx.ml"):
                print(f"missing: {dom}:{p.name}-{p.since_version}")
                bad += 1
            continue
        checked += 1
        if p.deprecated and s.deprecated:
            continue  # the changelog gives no details of a deprecated version: none needed
        mine = (s.deprecated, s.io_range("Inputs"), s.io_range("Outputs"),
                sorted(s.attrs), [(i[0], i[1], i[2], i[3]) for i in s.inputs],
                [(o[0], o[1], o[2], o[3]) for o in s.outputs],
                sorted((c[0], sorted(c[1])) for c in s.constraints))
        theirs = (p.deprecated, (p.min_input, min(p.max_input, INF)),
                  (p.min_output, min(p.max_output, INF)),
                  sorted((a.name, int(a.type), a.required) for a in p.attributes.values()),
                  [(i.name, opt[i.option], i.isHomogeneous, i.typeStr) for i in p.inputs],
                  [(o.name, opt[o.option], o.isHomogeneous, o.typeStr) for o in p.outputs],
                  sorted((c.type_param_str, sorted(c.allowed_type_strs))
                         for c in p.type_constraints))
        for field, a, b in zip(("deprecated", "inputs", "outputs", "attrs", "in", "out",
                                "constraints"), mine, theirs):
            if a != b:
                print(f"{dom}:{p.name}-{p.since_version} {field}:\n  parsed {a}\n  python {b}")
                bad += 1
    print(f"verified {checked} schemas against python3-onnx, {bad} mismatches")
    return bad


def c_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


class Table:
    """Interned rows: a string pool, and rows or row sequences emitted once and shared."""

    def __init__(self):
        self.strings, self.string_at = [], {}
        self.rows = {"constraints": [], "params": [], "attrs": []}
        self.seen = {}
        self.pool_size = 0

    def string(self, s):
        if s not in self.string_at:
            self.string_at[s] = self.pool_size
            self.strings.append(s)
            self.pool_size += len(s.encode()) + 1
        return self.string_at[s]

    def sequence(self, kind, rows):
        """The first index of `rows` in table `kind`, appending them unless already there."""
        key = (kind, tuple(rows))
        if key not in self.seen:
            self.seen[key] = len(self.rows[kind])
            self.rows[kind].extend(rows)
        return self.seen[key]


def fits(value, bits, what):
    if not 0 <= value < (1 << bits):
        sys.exit(f"{what} = {value} does not fit the table's {bits}-bit field")
    return value


def schema_row(t, s, domain_index):
    cons = {name: types for name, types in s.constraints}

    def constraint(type_str):
        # A type variable (T) or a literal type ("tensor(int64)").
        types = cons.get(type_str) or split_types(type_str)
        row = f"{{0x{type_mask(types):x}ull, {t.string(type_str)}}}"
        return t.sequence("constraints", [row])

    def params(ps):
        rows = [f"{{{t.string(n)}, {opt}, {int(homo)}, {constraint(ts)}}}"
                for n, opt, homo, ts in ps]
        return t.sequence("params", rows), len(ps)

    fi, ni = params(s.inputs)
    fo, no = params(s.outputs)
    fa = t.sequence("attrs", [f"{{{t.string(n)}, {typ}, {int(req)}}}" for n, typ, req in s.attrs])
    unbounded = 0xFFFF
    (imin, imax), (omin, omax) = s.io_range("Inputs"), s.io_range("Outputs")
    imax, omax = (unbounded if m == INF else fits(m, 15, "max") for m in (imax, omax))
    who = f"{s.name}-{s.since}"
    flags = int(s.deprecated) | int(s.unchecked_attrs) << 1
    fields = [fits(t.string(s.name), 16, who), domain_index, fits(s.since, 8, who), flags, fits(ni, 8, who), fits(no, 8, who), fits(len(s.attrs), 8, who),
              imin, imax, omin, omax, fits(fi, 16, who), fits(fo, 16, who), fits(fa, 16, who),
              fits(sum(1 << c for c in s.output_counts), 16, who)]
    return "{" + ", ".join(str(f) for f in fields) + "}"


def emit(schemas, opsets, provenance):
    t = Table()
    domains = sorted(opsets)
    domain_rows = [f"{{{t.string(d)}, {opsets[d]}}}" for d in domains]
    rows = [schema_row(t, s, domains.index(s.domain)) for s in schemas]
    pool = [c_str(x) + ' "\\0"' for x in t.strings]
    fits(t.pool_size, 16, "string pool size")
    for kind in t.rows:
        fits(len(t.rows[kind]), 16, f"{kind} rows")

    def array(decl, items):
        return f"{decl}[] = {{\n  " + ",\n  ".join(items) + "};"

    out = [
        "// clang-format off",
        "// GENERATED by scripts/gen_onnx_schemas.py -- do not edit; rerun the script instead.",
        f"// Source: {provenance}.",
        "// The operator schemas are the ONNX project's (https://github.com/onnx/onnx),",
        "// Copyright (c) ONNX Project Contributors, licensed under the Apache License 2.0",
        "// (SPDX-License-Identifier: Apache-2.0); this file is a mechanical translation of them.",
        '#include "compiler/frontend/onnx/onnx_schemas.h"',
        "",
        "namespace ferrite::onnx::schema_data {",
        "",
        "// Every name, NUL-terminated; the tables below hold offsets into it.",
        "const char kStrings[] =\n  " + "\n  ".join(pool) + ";",
        "// Each domain's newest opset version.",
        array("const SchemaDomain kDomains", domain_rows),
        f"const size_t kDomainCount = {len(domains)};",
        array("const SchemaConstraint kConstraints", t.rows["constraints"]),
        array("const SchemaParam kParams", t.rows["params"]),
        array("const SchemaAttr kAttrs", t.rows["attrs"]),
        "// Sorted by (domain, name, since_version).",
        array("const OpSchema kSchemas", rows),
        f"const size_t kSchemaCount = {len(rows)};",
        "",
        "}  // namespace ferrite::onnx::schema_data",
        "// clang-format on",
        "",
    ]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--git-dir", help="an onnx/onnx git directory to read docs/ from")
    ap.add_argument("--rev", default="HEAD", help="the revision of --git-dir")
    ap.add_argument("--changelog", action="append", default=[], metavar="DOMAIN=FILE",
                    help="a further changelog in the same layout, for DOMAIN")
    ap.add_argument("--provenance", help="what the source is, for the generated header")
    ap.add_argument("--verify-python", action="store_true",
                    help="compare with python3-onnx's schemas instead of writing")
    ap.add_argument("-o", "--output")
    args = ap.parse_args()
    schemas, opsets = load_all(args)
    if args.verify_python:
        sys.exit(1 if verify_python(schemas) else 0)
    if not args.output:
        ap.error("-o is required")
    prov = args.provenance
    if not prov and args.git_dir:
        def git(*a):
            return subprocess.run(["git", "--git-dir", args.git_dir, *a], check=True,
                                  capture_output=True, text=True).stdout.strip()
        commit = git("log", "-1", "--format=%H (%cs)", args.rev)
        version = git("show", f"{args.rev}:VERSION_NUMBER")
        prov = (f"onnx/onnx docs/Changelog.md and docs/Changelog-ml.md at commit {commit},\n"
                f"//   VERSION_NUMBER {version}")
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(emit(schemas, opsets, prov or "ONNX operator changelogs"))
    print(f"{len(schemas)} schemas -> {args.output}")


if __name__ == "__main__":
    main()
