"""A reader of Ferrite's compiled plan format (.fplan, compiler/plan/plan_io.cc) that records
where each field lies, for the plan mutation tester (plan_mutate.py).

parse(data) walks the bytes as plan_io.cc's reader does and returns a list of Field: every
scalar of the plan (integers, enums, doubles, list counts) with its byte offset, width, kind
and a path such as `kernels[0].code[5].index.b.c`, plus the decoded value. A mutant is the
plan's bytes with one or more fields overwritten in place (same width), so that no
re-serialization is needed and a field's neighbours keep their bytes.
"""
import struct

VERSION = 6  # kPlanFormatVersion
MAGIC = b"FRPLAN\0\0"

# Enumerations, as in compiler/plan (the last value of each is the largest valid one).
OPS = ("Load Store Const LoopVar Cast CheckIndex Reduce Where Neg Abs Exp Log Sqrt Rsqrt "
       "Reciprocal Relu Sigmoid Tanh Erf Floor Ceil Round Sign Sin Cos Tan Asin Acos Atan "
       "Sinh Cosh Asinh Acosh Atanh Not IsNaN IsInf Add Sub Mul Div Pow Max Min Mod FMod Eq "
       "Lt Le Gt Ge And Or Xor BitNot BitAnd BitOr BitXor Shl Shr").split()
ARITY = {op: 0 for op in ("Load", "Const", "LoopVar")}
ARITY.update({op: 3 for op in ("Where",)})
ARITY.update({op: 2 for op in OPS[OPS.index("Add"):]})
ARITY["BitNot"] = 1
DTYPES = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16) + tuple(range(17, 27))
SCALAR_TYPES = 4
REDUCE_KINDS = 6
INDEX_KINDS = 7
BUFFER_KINDS = 4
STEP_KINDS = 2

_FMT = {"u8": "<B", "u32": "<I", "i32": "<i", "u64": "<Q", "i64": "<q", "f64": "<d"}


class Field:
    __slots__ = ("offset", "kind", "path", "value", "role")

    def __init__(self, offset, kind, path, value, role):
        self.offset, self.kind, self.path, self.value, self.role = offset, kind, path, value, role

    @property
    def width(self):
        return struct.calcsize(_FMT[self.kind])

    def encode(self, value):
        return struct.pack(_FMT[self.kind], value)

    def __repr__(self):
        return f"{self.path}@{self.offset}:{self.kind}={self.value!r}"


class PlanFormatError(Exception):
    pass


class _Reader:
    def __init__(self, data):
        self.data, self.pos, self.fields = data, 0, []

    def scalar(self, kind, path, role="int"):
        fmt = _FMT[kind]
        n = struct.calcsize(fmt)
        if self.pos + n > len(self.data):
            raise PlanFormatError(f"truncated at {path}")
        (v,) = struct.unpack_from(fmt, self.data, self.pos)
        self.fields.append(Field(self.pos, kind, path, v, role))
        self.pos += n
        return v

    def raw(self, n, path):
        if self.pos + n > len(self.data):
            raise PlanFormatError(f"truncated at {path}")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def count(self, path):
        return self.scalar("u32", path, "count")

    def str(self, path):
        return self.raw(self.count(path + ".len"), path).decode("utf-8", "replace")

    def blob(self, path):
        return self.raw(self.scalar("u64", path + ".len", "count"), path)

    def i64s(self, path, role="int"):
        return [self.scalar("i64", f"{path}[{i}]", role) for i in range(self.count(path))]

    def i32s(self, path, role="int"):
        return [self.scalar("i32", f"{path}[{i}]", role) for i in range(self.count(path))]


def _index(r, path, depth=0):
    if r.scalar("u8", path + ".present", "bool") == 0:
        return None
    if depth > 300:
        raise PlanFormatError("index too deep")
    node = {"kind": r.scalar("u8", path + ".kind", "index_kind"),
            "c": r.scalar("i64", path + ".c", "index_c"),
            "id": r.scalar("i32", path + ".id", "index_id")}
    node["a"] = _index(r, path + ".a", depth + 1)
    node["b"] = _index(r, path + ".b", depth + 1)
    return node


def _kernel(r, p):
    k = {"name": r.str(p + ".name"), "ranges": r.i64s(p + ".ranges", "range"),
         "num_reduce": r.scalar("i32", p + ".num_reduce", "small")}
    k["args"] = []
    for i in range(r.count(p + ".args")):
        q = f"{p}.args[{i}]"
        k["args"].append({"dtype": r.scalar("u8", q + ".dtype", "dtype"),
                          "elements": r.scalar("i64", q + ".elements", "elements"),
                          "output": r.scalar("u8", q + ".output", "bool")})
    k["code"] = []
    for i in range(r.count(p + ".code")):
        q = f"{p}.code[{i}]"
        ins = {"op": r.scalar("u8", q + ".op", "op"), "type": r.scalar("u8", q + ".type", "stype")}
        for f in ("a", "b", "c", "arg"):
            ins[f] = r.scalar("i32", f"{q}.{f}", "ssa" if f != "arg" else "instr_arg")
        ins["reduce"] = r.scalar("u8", q + ".reduce", "reduce")
        ins["mask"] = r.scalar("i32", q + ".mask", "ssa")
        ins["index"] = _index(r, q + ".index")
        ins["fimm"] = r.scalar("f64", q + ".fimm", "float")
        ins["iimm"] = r.scalar("i64", q + ".iimm", "iimm")
        k["code"].append(ins)
    k["post_begin"] = r.scalar("i32", p + ".post_begin", "small")
    k["loop_ends"] = r.i32s(p + ".loop_ends", "small")
    k["messages"] = [r.str(f"{p}.messages[{i}]") for i in range(r.count(p + ".messages"))]
    return k


def _ref(r, p):
    return {"buffer": r.scalar("i32", p + ".buffer", "buffer"),
            "shape": r.i64s(p + ".shape", "dim"), "strides": r.i64s(p + ".strides", "stride"),
            "offset": r.scalar("i64", p + ".offset", "offset")}


def _extern(r, p):
    x = {"op": r.str(p + ".op"), "origin": r.str(p + ".origin"), "ints": {}, "floats": {}}
    for i in range(r.count(p + ".ints")):
        key = r.str(f"{p}.ints[{i}].key")
        x["ints"][key] = r.scalar("i64", f"{p}.ints[{key}]", "attr")
    for i in range(r.count(p + ".floats")):
        key = r.str(f"{p}.floats[{i}].key")
        x["floats"][key] = r.scalar("f64", f"{p}.floats[{key}]", "float")
    x["inputs"] = [_ref(r, f"{p}.inputs[{i}]") for i in range(r.count(p + ".inputs"))]
    x["outputs"] = [_ref(r, f"{p}.outputs[{i}]") for i in range(r.count(p + ".outputs"))]
    x["epilogue"] = []
    for i in range(r.count(p + ".epilogue")):
        q = f"{p}.epilogue[{i}]"
        x["epilogue"].append({"op": r.scalar("u8", q + ".op", "op"),
                              "a": r.scalar("i32", q + ".a", "ssa"),
                              "b": r.scalar("i32", q + ".b", "ssa"),
                              "c": r.scalar("i32", q + ".c", "ssa"),
                              "input": r.scalar("i32", q + ".input", "small"),
                              "value": r.scalar("f64", q + ".value", "float")})
    return x


def parse(data):
    """Returns (plan dict, [Field]); raises PlanFormatError on a malformed plan."""
    r = _Reader(data)
    if r.raw(8, "magic") != MAGIC:
        raise PlanFormatError("bad magic")
    version = r.scalar("u32", "version", "version")
    if version != VERSION:
        raise PlanFormatError(f"format version {version}, this reader knows {VERSION}")
    plan = {"buffers": []}
    for i in range(r.count("buffers")):
        p = f"buffers[{i}]"
        plan["buffers"].append({"name": r.str(p + ".name"),
                                "dtype": r.scalar("u8", p + ".dtype", "dtype"),
                                "shape": r.i64s(p + ".shape", "dim"),
                                "kind": r.scalar("u8", p + ".kind", "buffer_kind"),
                                "offset": r.scalar("i64", p + ".offset", "pool_offset"),
                                "constant": r.scalar("i32", p + ".constant", "small")})
    plan["constants"] = [r.blob(f"constants[{i}]") for i in range(r.count("constants"))]
    plan["packed"] = []
    for i in range(r.count("packed")):
        p = f"packed[{i}]"
        plan["packed"].append({"extern": r.scalar("i32", p + ".extern", "small"),
                               "input": r.scalar("i32", p + ".input", "small"),
                               "layout": r.str(p + ".layout"), "bytes": r.blob(p + ".bytes")})
    plan["kernels"] = [_kernel(r, f"kernels[{i}]") for i in range(r.count("kernels"))]
    plan["externs"] = [_extern(r, f"externs[{i}]") for i in range(r.count("externs"))]
    plan["steps"] = []
    for i in range(r.count("steps")):
        p = f"steps[{i}]"
        st = {"kind": r.scalar("u8", p + ".kind", "step_kind"),
              "index": r.scalar("i32", p + ".index", "small"),
              "buffers": r.i32s(p + ".buffers", "buffer"), "guards": []}
        for g in range(r.count(p + ".guards")):
            st["guards"].append({"buffer": r.scalar("i32", f"{p}.guards[{g}].buffer", "buffer"),
                                 "value": r.scalar("u8", f"{p}.guards[{g}].value", "bool")})
        plan["steps"].append(st)
    plan["inputs"] = r.i32s("inputs", "buffer")
    plan["outputs"] = r.i32s("outputs", "buffer")
    plan["pool_bytes"] = r.scalar("i64", "pool_bytes", "pool_bytes")
    if r.pos != len(data):
        raise PlanFormatError(f"{len(data) - r.pos} trailing bytes")
    return plan, r.fields


def patch(data, changes):
    """data with each (Field, value) written over its bytes."""
    out = bytearray(data)
    for f, v in changes:
        out[f.offset:f.offset + f.width] = f.encode(v)
    return bytes(out)


def set_version(data, version):
    return data[:8] + struct.pack("<I", version) + data[12:]
