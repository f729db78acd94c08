#!/usr/bin/python3
"""quant_check's low-bit weight cases: com.microsoft MatMulNBits (2-, 4- and 8-bit codes in
blocks along K, packed, float or no zero points) and MatMul by an opset-21 DequantizeLinear of
blocked int2/uint2/int4/uint4/int8/uint8 weights (fused into MatMulNBits), against numpy on the
dequantized weights in float64."""
import os
import shlex
import subprocess

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from op_check import case, run

# Float outputs within this much of the largest |expected|: float32 sums over K (up to 300)
# of products whose terms exceed |y| (cancellation), rounded in another order than numpy's.
TOLERANCE = 4e-6
rng = np.random.default_rng(12)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def scales(*shape):
    return rng.uniform(0.01, 0.2, size=shape).astype(np.float32)


def pack(codes, bits):
    """Codes (last axis) packed low bits first, 8 / bits to a byte."""
    per = 8 // bits
    codes = codes.reshape(codes.shape[:-1] + (-1, per)).astype(np.uint8)
    out = np.zeros(codes.shape[:-1], np.uint8)
    for i in range(per):
        out |= codes[..., i] << (i * bits)
    return out


def matmul_nbits_case(name, bits, k, n, block, zp_kind, with_bias, a_shape=(2, 3)):
    blocks = (k + block - 1) // block
    codes = rng.integers(0, 2 ** bits, size=(n, blocks, block)).astype(np.uint8)
    s = scales(n, blocks)
    if zp_kind == "packed":
        zc = rng.integers(0, 2 ** bits, size=(n, blocks))
        per = 8 // bits
        padded = np.zeros((n, -(-blocks // per) * per), np.uint8)
        padded[:, :blocks] = zc
        zp, z = pack(padded, bits).reshape(-1), zc.astype(np.float32)
    elif zp_kind == "float":
        z = rng.uniform(0, 2 ** bits - 1, size=(n, blocks)).astype(np.float32)
        zp = z.reshape(-1)
    else:
        zp, z = None, np.full((n, blocks), 2 ** (bits - 1), np.float32)
    w = ((codes.astype(np.float32) - z[:, :, None]) * s[:, :, None]).reshape(n, -1)[:, :k]
    a = f32(*a_shape, k)
    bias = f32(n) if with_bias else None
    y = np.matmul(a.astype(np.float64), w.T.astype(np.float64))
    if bias is not None:
        y = y + bias
    inputs = [("a", a), ("b", pack(codes, bits)), ("s", s.reshape(-1)), ("z", zp), ("g", None),
              ("bias", bias)]
    return case(name, "MatMulNBits", inputs, ["y"], [y], consts=["b", "s", "z"], K=k, N=n,
                bits=bits, block_size=block)


# ONNX element types python3-onnx 1.12 has no names for (TensorProto.data_type is an int32).
SMALL_TYPES = {"uint4": (21, 4, False), "int4": (22, 4, True), "uint2": (25, 2, False),
               "int2": (26, 2, True), "uint8": (TensorProto.UINT8, 8, False),
               "int8": (TensorProto.INT8, 8, True)}


def small_tensor(name, values, type_name):
    """A TensorProto of `type_name` (SMALL_TYPES) holding `values`, packed as ONNX packs
    them: the flattened elements low bits first, 8 / bits to a byte."""
    code, bits, _ = SMALL_TYPES[type_name]
    t = onnx.TensorProto()
    t.name, t.data_type = name, code
    t.dims.extend(values.shape)
    flat = values.astype(np.int64).reshape(-1) & ((1 << bits) - 1)
    per = 8 // bits
    flat = np.concatenate([flat, np.zeros((-len(flat)) % per, np.int64)])
    t.raw_data = pack(flat.astype(np.uint8), bits).tobytes()
    return t


def block_weights_cases():
    """MatMul by DequantizeLinear-21 of blocked weights [K, N] (axis 0), as onnxruntime's 4-bit
    quantizer writes its QDQ form: fused into MatMulNBits (the codes kept), against numpy on
    the dequantized weights in float64."""
    cs = []
    for name, type_name, k, n, block, zp, rows in [
            ("dq_int4_matmul", "int4", 96, 20, 32, True, (3,)),
            ("dq_uint4_matmul_no_zp", "uint4", 70, 9, 16, False, (1,)),
            ("dq_int8_matmul", "int8", 64, 5, 64, True, (2, 4)),
            ("dq_uint2_matmul", "uint2", 48, 7, 16, True, (5,))]:
        _, bits, signed = SMALL_TYPES[type_name]
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
        blocks = -(-k // block)
        w = rng.integers(lo, hi + 1, size=(k, n))
        z = rng.integers(lo, hi + 1, size=(blocks, n)) if zp else np.zeros((blocks, n), np.int64)
        s = scales(blocks, n)
        deq = (w - np.repeat(z, block, axis=0)[:k]) * np.repeat(s, block, axis=0)[:k]
        a = f32(*rows, k)
        inits = [small_tensor("w", w, type_name), numpy_helper.from_array(s, "s")]
        if zp:
            inits.append(small_tensor("z", z, type_name))
        nodes = [helper.make_node("DequantizeLinear", ["w", "s"] + (["z"] if zp else []), ["wf"],
                                  axis=0, block_size=block),
                 helper.make_node("MatMul", ["a", "wf"], ["y"])]
        want = np.matmul(a.astype(np.float64), deq.astype(np.float64))
        cs.append((name, nodes, inits, a, want, 25 if bits == 2 else 21))  # 2 bits: opset 25
    return cs


def check_block_weights(cli, work, backend):
    failures = 0
    for name, nodes, inits, a, want, opset in block_weights_cases():
        graph = helper.make_graph(
            nodes, name, [helper.make_tensor_value_info("a", TensorProto.FLOAT, list(a.shape))],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 10
        path = os.path.join(work, name + ".onnx")
        onnx.save(model, path)
        feed = os.path.join(work, f"{name}_a.npy")
        np.save(feed, a)
        out = os.path.join(work, f"{name}_{backend}")
        r = run(cli, path, {"a": feed}, out, backend)
        fused = "MatMulNBits" in subprocess.run(shlex.split(cli) + ["inspect", path],
                                               capture_output=True, text=True).stdout
        got = np.load(os.path.join(out, "y.npy")) if r.returncode == 0 else None
        err = float(np.linalg.norm(got - want) / np.linalg.norm(want)) if got is not None else None
        ok = got is not None and got.shape == want.shape and err <= TOLERANCE and fused
        print(f"{'ok  ' if ok else 'FAIL'} {name} {backend}: "
              f"{'MatMulNBits' if fused else 'not fused'}, "
              f"{'exit ' + str(r.returncode) + ' ' + r.stderr.strip()[:120] if got is None else f'rel err {err:.2e}'}")
        failures += not ok
    return failures


def nbits_cases():
    return [
        matmul_nbits_case("matmul_4bits", 4, 40, 5, 16, "packed", True),
        matmul_nbits_case("matmul_8bits", 8, 32, 3, 32, None, False),
        matmul_nbits_case("matmul_2bits_float_zp", 2, 64, 4, 16, "float", True),
        # One row (a decoder's step: the direct kernel), a vector A, and rows past the
        # portable direct kernel's 96 (the GEMM decoding its panels), at sizes that take whole
        # vectors and remainders on every target.
        matmul_nbits_case("matmul_4bits_gemv", 4, 300, 70, 32, "packed", True, (1,)),
        matmul_nbits_case("matmul_4bits_vector", 4, 128, 9, 128, None, False, ()),
        matmul_nbits_case("matmul_4bits_prompt", 4, 200, 33, 64, "float", True, (100,)),
        matmul_nbits_case("matmul_8bits_rows", 8, 96, 17, 16, "packed", False, (2, 9))]
