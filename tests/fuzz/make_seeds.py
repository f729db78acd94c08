#!/usr/bin/python3
"""Seed corpora for the fuzz targets (tests/fuzz/README.md), written under OUT:

  onnx/    every model.onnx of the ONNX node suites up to --max-size bytes: Debian's
           libonnx-testdata 1.12 (node, simple, pytorch-operator, pytorch-converted), every
           model.onnx under tests/conformance, and the ONNX 1.23 suite's tarball (read in
           place: the one vendored in tests/conformance/onnx-node-1.23, else --suite-tar or
           ../shared/testdata's), and small com.microsoft models made here (contrib_cases:
           MatMulNBits, which no suite has)
  tensor/  some input_N.pb of those suites (serialized TensorProtos, for fuzz_onnx_import)
  plan/    those models compiled with `ferrite compile` (--ferrite; skipped without it)
  npy/     .npy files of every dtype and layout numpy writes, and a few it does not

Files are named after their case and deduplicated by content. OUT/.stamp records what made
them (this script, the plan format version, the suites found); when it matches, nothing is
done, so CI pays for the seeds once per machine.

  make_seeds.py --out build/fuzz/seeds [--ferrite build/native/bin/ferrite]
                [--suite-tar PATH] [--max-size 65536] [--jobs 2]
"""
import argparse
import concurrent.futures
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEBIAN_SUITES = "/usr/share/libonnx-testdata/data"
TAR_CANDIDATES = [os.path.join(ROOT, "tests", "conformance", "onnx-node-1.23", "onnx-node-1.23.tar.gz"),
                  os.path.join(ROOT, "..", "shared", "testdata", "onnx-node-1.23.tar.gz"),
                  os.path.join(ROOT, "..", "..", "shared", "testdata", "onnx-node-1.23.tar.gz")]


def plan_format_version():
    with open(os.path.join(ROOT, "compiler", "plan", "plan_io.h")) as f:
        return re.search(r"kPlanFormatVersion = (\d+)", f.read()).group(1)


class Writer:
    """Writes each distinct content once, as DIR/NAME (NAME made unique)."""

    def __init__(self, out):
        self.out, self.seen, self.count = out, set(), 0
        os.makedirs(out, exist_ok=True)

    def add(self, name, data):
        digest = hashlib.sha1(data).digest()
        if digest in self.seen:
            return None
        self.seen.add(digest)
        path = os.path.join(self.out, re.sub(r"[^A-Za-z0-9_.-]", "_", name))
        if os.path.exists(path):
            stem, ext = os.path.splitext(path)
            path = f"{stem}_{digest.hex()[:8]}{ext}"
        with open(path, "wb") as f:
            f.write(data)
        self.count += 1
        return path


def case_files(max_size):
    """(name, model bytes, first input .pb bytes or None) of every suite case found."""
    for suite in ["node", "simple", "pytorch-operator", "pytorch-converted"]:
        base = os.path.join(DEBIAN_SUITES, suite)
        for case in sorted(os.listdir(base)) if os.path.isdir(base) else []:
            yield from read_case(f"{suite}_{case}", os.path.join(base, case), max_size)
    for dirpath, _, files in sorted(os.walk(os.path.join(ROOT, "tests", "conformance"))):
        if "model.onnx" in files:
            yield from read_case("conf_" + os.path.basename(dirpath), dirpath, max_size)


def contrib_cases():
    """(name, model bytes, None) of small com.microsoft models: MatMulNBits at 2, 4 and 8
    bits, with uint8, float and no zero points, and a bias."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(7)
    for bits, zp_kind, block in [(4, "packed", 16), (2, "float", 32), (8, None, 16)]:
        k, n = 40, 6
        blocks, blob = -(-k // block), block * bits // 8
        inits = [numpy_helper.from_array(rng.integers(0, 256, (n, blocks, blob), dtype=np.uint8), "b"),
                 numpy_helper.from_array(rng.uniform(-0.1, 0.1, n * blocks).astype(np.float32), "s")]
        inputs = ["a", "b", "s"]
        if zp_kind == "packed":
            inits.append(numpy_helper.from_array(
                rng.integers(0, 256, n * -(-blocks * bits // 8), dtype=np.uint8), "z"))
            inputs.append("z")
        elif zp_kind == "float":
            inits.append(numpy_helper.from_array(
                rng.uniform(0, 2 ** bits - 1, n * blocks).astype(np.float32), "z"))
            inputs.append("z")
        if bits == 4:
            inputs += ["", "bias"]
            inits.append(numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), "bias"))
        node = helper.make_node("MatMulNBits", inputs, ["y"], domain="com.microsoft", K=k, N=n,
                                bits=bits, block_size=block)
        graph = helper.make_graph([node], "nbits", [helper.make_tensor_value_info(
            "a", TensorProto.FLOAT, [2, k])], [helper.make_tensor_value_info(
                "y", TensorProto.FLOAT, [2, n])], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                        helper.make_opsetid("com.microsoft", 1)])
        yield f"contrib_matmul_nbits_{bits}", model.SerializeToString(), None


def read_case(name, case_dir, max_size):
    model = os.path.join(case_dir, "model.onnx")
    if not os.path.isfile(model) or os.path.getsize(model) > max_size:
        return
    pb = os.path.join(case_dir, "test_data_set_0", "input_0.pb")
    with open(model, "rb") as f:
        data = f.read()
    tensor = None
    if os.path.isfile(pb) and os.path.getsize(pb) <= max_size:
        with open(pb, "rb") as f:
            tensor = f.read()
    yield name, data, tensor


def tar_cases(path, max_size):
    with tarfile.open(path) as tar:
        for m in tar:
            parts = m.name.split("/")
            if m.isfile() and m.size <= max_size and len(parts) >= 3:
                if parts[-1] == "model.onnx":
                    yield "v123_" + parts[-2], tar.extractfile(m).read(), None
                elif parts[-1] == "input_0.pb" and parts[-2] == "test_data_set_0":
                    yield "v123_" + parts[-3], None, tar.extractfile(m).read()


def npy_seeds(w):
    arrays = {
        "f32": np.arange(6, dtype=np.float32).reshape(2, 3), "f64": np.array([1.5, -2.0]),
        "f16": np.ones((2, 2), np.float16), "i8": np.array([-1, 2], np.int8),
        "u8": np.array([[255]], np.uint8), "i16": np.zeros(3, np.int16),
        "u16": np.array([7], np.uint16), "i32": np.array([[1], [2]], np.int32),
        "u32": np.array([3], np.uint32), "i64": np.array([1, -1, 2**62], np.int64),
        "u64": np.array([2**63], np.uint64), "bool": np.array([True, False]),
        "scalar": np.float32(3.5), "empty": np.zeros((0, 3), np.float32),
        "rank6": np.zeros((1, 2, 1, 2, 1, 2), np.float32),
        "fortran": np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)),
        "bigendian": np.arange(3, dtype=">f4"), "c64": np.array([1 + 2j], np.complex64),
        "str": np.array(["ab", "c"]), "obj": np.array([None, 1], dtype=object),
    }
    for name, a in arrays.items():
        for version in [(1, 0), (2, 0), (3, 0)]:
            buf = io.BytesIO()
            try:
                np.lib.format.write_array(buf, np.asanyarray(a), version=version,
                                          allow_pickle=True)
            except ValueError:
                continue
            w.add(f"{name}_v{version[0]}.npy", buf.getvalue())


def compile_plan(ferrite, model_path, tmp):
    plan = os.path.join(tmp, os.path.basename(model_path) + ".fplan")
    try:
        p = subprocess.run([ferrite, "compile", model_path, "-o", plan], capture_output=True,
                           timeout=60, env=dict(os.environ, OMP_NUM_THREADS="1"))
    except subprocess.TimeoutExpired:
        return None
    if p.returncode != 0 or not os.path.isfile(plan):
        return None
    with open(plan, "rb") as f:
        data = f.read()
    os.remove(plan)
    return data


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--ferrite", default="")
    ap.add_argument("--suite-tar", default="")
    ap.add_argument("--max-size", type=int, default=65536)
    ap.add_argument("--jobs", type=int, default=2)
    opts = ap.parse_args()
    tar = opts.suite_tar or next((p for p in TAR_CANDIDATES if os.path.isfile(p)), "")
    vendored = any("model.onnx" in f for _, _, f in os.walk(os.path.join(ROOT, "tests", "conformance")))
    with open(os.path.abspath(__file__), "rb") as f:
        stamp = hashlib.sha1(f.read()).hexdigest() + f" plan-format {plan_format_version()}"
    stamp += f" vendored {vendored} tar {bool(tar) and not vendored} ferrite {bool(opts.ferrite)}"
    stamp += f" max {opts.max_size}"
    stamp_path = os.path.join(opts.out, ".stamp")
    if os.path.isfile(stamp_path) and open(stamp_path).read() == stamp:
        print(f"{opts.out} is up to date")
        return 0
    if os.path.isfile(stamp_path):
        os.remove(stamp_path)
    # Made again from nothing: seeds of an older plan format must not linger.
    for d in ["onnx", "tensor", "plan", "npy"]:
        shutil.rmtree(os.path.join(opts.out, d), ignore_errors=True)
    onnx, tensor, plan, npy = (Writer(os.path.join(opts.out, d))
                               for d in ["onnx", "tensor", "plan", "npy"])
    cases = list(case_files(opts.max_size)) + list(contrib_cases())
    if tar and not vendored:
        cases += list(tar_cases(tar, opts.max_size))
    models = []
    for name, model, pb in cases:
        if model is not None:
            path = onnx.add(name + ".onnx", model)
            if path:
                models.append(path)
        if pb is not None and len(tensor.seen) < 400:
            tensor.add(name + ".pb", pb)
    npy_seeds(npy)
    if opts.ferrite:
        with tempfile.TemporaryDirectory() as tmp, \
                concurrent.futures.ThreadPoolExecutor(opts.jobs) as pool:
            for path, data in zip(models, pool.map(
                    lambda m: compile_plan(opts.ferrite, m, tmp), models)):
                if data and len(data) <= opts.max_size:
                    plan.add(os.path.basename(path)[:-5] + ".fplan", data)
    with open(stamp_path, "w") as f:
        f.write(stamp)
    print(f"seeds in {opts.out}: {onnx.count} models, {tensor.count} tensors, "
          f"{plan.count} plans, {npy.count} npy files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
