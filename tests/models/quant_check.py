#!/usr/bin/python3
"""The quantized ops against numpy formulas.

QuantizeLinear and DequantizeLinear (per tensor, per axis, blocked; uint8, int8, uint16,
int16, int32), DynamicQuantizeLinear, MatMulInteger, QLinearMatMul, ConvInteger and
QLinearConv (groups, strides, dilations, pads, auto_pad, per-channel weight parameters,
bias) on shapes the ONNX node suites do not cover, with onnxruntime's arithmetic: the
division by a scale and the requantization multiplier a_scale * b_scale / y_scale in float32,
rounding half to even, saturation. Integer outputs must be exact, float ones within 1e-6 of
the largest |expected|. Also checks that a scale of the wrong shape fails naming it. The
com.microsoft quantized ops too, and the low-bit weight cases of quant_nbits.py.
Exits 1 on any mismatch.

  /usr/bin/python3 tests/models/quant_check.py --cli build/native/bin/ferrite --work DIR
"""
import argparse
import itertools
import os
import shlex
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from op_check import case, check_case, check_error, run
import quant_nbits
from quant_nbits import check_block_weights, nbits_cases

TOLERANCE = 1e-6
rng = np.random.default_rng(11)
RANGE = {np.int8: (-128, 127), np.uint8: (0, 255), np.int16: (-32768, 32767),
         np.uint16: (0, 65535)}


def ints(t, *shape):
    lo, hi = RANGE[t]
    return rng.integers(lo, hi + 1, size=shape).astype(t)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def scales(*shape):
    return rng.uniform(0.01, 0.2, size=shape).astype(np.float32)


def quantize(x, s, zp, t):
    q = np.rint(x.astype(np.float32) / s.astype(np.float32)).astype(np.float64) + zp
    lo, hi = RANGE[t]
    return np.clip(q, lo, hi).astype(t)


def dequantize(q, s, zp):
    return ((q.astype(np.int64) - zp).astype(np.float32) * s).astype(np.float32)


def along(p, rank, axis):
    """A per-axis parameter reshaped to broadcast along `axis` of a rank-`rank` tensor."""
    shape = [1] * rank
    shape[axis] = p.size
    return p.reshape(shape)


def blocked(p, axis, block, size):
    """A blocked parameter repeated to `size` along `axis`."""
    return np.repeat(p, block, axis=axis).take(np.arange(size), axis=axis)


def requantize(acc, m, zp, t):
    real = acc.astype(np.float32) * m.astype(np.float32)
    lo, hi = RANGE[t]
    return np.clip(np.rint(real).astype(np.float64) + zp, lo, hi).astype(t)


def conv_int(x, w, strides, dilations, pads, group):
    """int64 convolution of [N, C, D...] by [M, C / group, k...]; pads begin then end."""
    n, c = x.shape[:2]
    m, cg = w.shape[:2]
    k = w.shape[2:]
    r = len(k)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[d], pads[d + r]) for d in range(r)])
    out = [(xp.shape[2 + d] - ((k[d] - 1) * dilations[d] + 1)) // strides[d] + 1 for d in range(r)]
    y = np.zeros([n, m] + out, np.int64)
    per = m // group
    for o in itertools.product(*[range(v) for v in out]):
        for oc in range(m):
            g = oc // per
            win = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + tuple(
                slice(o[d] * strides[d], o[d] * strides[d] + (k[d] - 1) * dilations[d] + 1,
                      dilations[d]) for d in range(r))]
            y[(slice(None), oc) + o] = (win * w[oc]).reshape(n, -1).sum(1)
    return y


def quantize_cases():
    cs = []
    x, s, z = f32(3, 5), np.array(0.05, np.float32), np.array(-3, np.int8)
    cs.append(case("quantize_tensor_int8", "QuantizeLinear", [("x", x), ("s", s), ("z", z)], ["y"],
                   [quantize(x, s, z, np.int8)], domain=""))
    x = f32(4, 3, 2) * 4
    s, z = scales(3), ints(np.uint8, 3)
    cs.append(case("quantize_axis_uint8", "QuantizeLinear", [("x", x), ("s", s), ("z", z)], ["y"],
                   [quantize(x, along(s, 3, 1), along(z, 3, 1), np.uint8)], domain=""))
    s, z = scales(2), ints(np.int16, 2)
    cs.append(case("quantize_axis_last_int16", "QuantizeLinear", [("x", x * 300), ("s", s),
                   ("z", z)], ["y"], [quantize(x * 300, along(s, 3, 2), along(z, 3, 2), np.int16)],
                   domain="", opset=21, axis=-1))
    x = f32(2, 7) * 3
    s, z = scales(2, 3), ints(np.int8, 2, 3)
    cs.append(case("quantize_blocked_int8", "QuantizeLinear", [("x", x), ("s", s), ("z", z)],
                   ["y"], [quantize(x, blocked(s, 1, 3, 7), blocked(z, 1, 3, 7), np.int8)],
                   domain="", opset=21, axis=1, block_size=3))
    s = scales(1, 7) * 100
    cs.append(case("quantize_blocked_uint16_no_zp", "QuantizeLinear", [("x", x * 1000),
                   ("s", s)], ["y"], [quantize(x * 1000, blocked(s, 0, 2, 2), 0, np.uint16)],
                   domain="", opset=21, axis=0, block_size=2,
                   output_dtype=TensorProto.UINT16))
    s = np.array(0.02, np.float32)
    cs.append(case("quantize_output_dtype", "QuantizeLinear", [("x", x), ("s", s), ("z", None)],
                   ["y"], [quantize(x, s, 0, np.int8)], domain="", opset=21,
                   output_dtype=TensorProto.INT8))
    cs.append(case("quantize_default_uint8", "QuantizeLinear", [("x", x), ("s", s)], ["y"],
                   [quantize(x, s, 0, np.uint8)], domain="", opset=13))
    return cs


def dequantize_cases():
    cs = []
    q, s, z = ints(np.int8, 2, 3, 4), scales(3), ints(np.int8, 3)
    cs.append(case("dequantize_axis_int8", "DequantizeLinear", [("q", q), ("s", s), ("z", z)],
                   ["y"], [dequantize(q, along(s, 3, 1), along(z, 3, 1))], domain=""))
    q, s, z = ints(np.uint16, 5, 4), scales(2, 4), ints(np.uint16, 2, 4)
    cs.append(case("dequantize_blocked_uint16", "DequantizeLinear", [("q", q), ("s", s),
                   ("z", z)], ["y"], [dequantize(q, blocked(s, 0, 3, 5), blocked(z, 0, 3, 5))],
                   domain="", opset=21, axis=0, block_size=3))
    q = rng.integers(-2**31, 2**31, size=(6,)).astype(np.int32)
    s = np.array(1e-4, np.float32)
    cs.append(case("dequantize_int32", "DequantizeLinear", [("q", q), ("s", s)], ["y"],
                   [dequantize(q, s, 0)], domain=""))
    return cs


def dynamic_quantize(x):
    lo, hi = min(float(x.min()), 0.0), max(float(x.max()), 0.0)
    s = np.float32(1.0) if lo == hi else np.float32(np.float32(hi) - np.float32(lo)) / np.float32(255)
    zp = np.rint(np.clip(np.float32(0) - np.float32(lo) / s, 0, 255))
    return quantize(x, np.float32(s), zp, np.uint8), np.array(s, np.float32), np.array(zp, np.uint8)


def dynamic_cases():
    cs = []
    for name, x in [("dynamic_quantize", f32(4, 6)), ("dynamic_quantize_negative", -np.abs(f32(9))),
                    ("dynamic_quantize_zeros", np.zeros((3,), np.float32))]:
        cs.append(case(name, "DynamicQuantizeLinear", [("x", x)], ["y", "s", "z"],
                       list(dynamic_quantize(x)), domain="", opset=11))
    return cs


def matmul_cases():
    cs = []
    a, b = ints(np.uint8, 2, 3, 5), ints(np.int8, 5, 4)
    az, bz = ints(np.uint8, 3), ints(np.int8, 4)
    acc = np.matmul(a.astype(np.int64) - az.reshape(3, 1), b.astype(np.int64) - bz)
    cs.append(case("matmul_integer_rows_cols", "MatMulInteger", [("a", a), ("b", b), ("az", az),
                   ("bz", bz)], ["y"], [acc.astype(np.int32)], domain="", opset=10))
    a1 = ints(np.int8, 5)
    cs.append(case("matmul_integer_vector", "MatMulInteger", [("a", a1), ("b", b)], ["y"],
                   [np.matmul(a1.astype(np.int64), b.astype(np.int64)).astype(np.int32)],
                   domain="", opset=10))
    for t, name in [(np.int8, "int8"), (np.uint8, "uint8")]:
        a, b = ints(t, 2, 3, 6), ints(t, 2, 6, 4)
        az, bz, yz = ints(t, 1), ints(t, 1), ints(t, 1)
        sa, sb, sy = scales(1), scales(1), np.array([0.05], np.float32)
        acc = np.matmul(a.astype(np.int64) - az, b.astype(np.int64) - bz)
        m = (sa * sb / sy).astype(np.float32)
        cs.append(case(f"qlinear_matmul_{name}", "QLinearMatMul",
                       [("a", a), ("sa", sa), ("az", az), ("b", b), ("sb", sb), ("bz", bz),
                        ("sy", sy), ("yz", yz)], ["y"], [requantize(acc, m, yz, t)], domain="",
                       opset=10))
    a, b = ints(np.uint8, 3, 7), ints(np.uint8, 7, 5)
    sa, az = scales(3), ints(np.uint8, 3)
    sb, bz = scales(5), ints(np.uint8, 5)
    sy, yz = np.array(0.5, np.float32), np.array(128, np.uint8)
    acc = np.matmul(a.astype(np.int64) - az.reshape(3, 1), b.astype(np.int64) - bz)
    m = (sa.reshape(3, 1) * sb / sy).astype(np.float32)
    cs.append(case("qlinear_matmul_rows_cols", "QLinearMatMul",
                   [("a", a), ("sa", sa), ("az", az), ("b", b), ("sb", sb), ("bz", bz),
                    ("sy", sy), ("yz", yz)], ["y"], [requantize(acc, m, yz, np.uint8)],
                   domain="", opset=21))
    return cs


def conv_cases():
    cs = []
    x, w = ints(np.uint8, 2, 4, 7, 6), ints(np.uint8, 6, 2, 3, 2)
    xz, wz = np.array(100, np.uint8), ints(np.uint8, 6)
    attrs = dict(group=2, strides=[2, 1], dilations=[1, 2], pads=[1, 0, 2, 1])
    acc = conv_int(x.astype(np.int64) - xz, w.astype(np.int64) - wz.reshape(6, 1, 1, 1),
                   [2, 1], [1, 2], [1, 0, 2, 1], 2)
    cs.append(case("conv_integer_groups", "ConvInteger", [("x", x), ("w", w), ("xz", xz),
                   ("wz", wz)], ["y"], [acc.astype(np.int32)], domain="", opset=10, **attrs))
    x1, w1 = ints(np.int8, 1, 3, 9), ints(np.int8, 2, 3, 4)
    acc = conv_int(x1.astype(np.int64), w1.astype(np.int64), [1], [1], [1, 2], 1)  # SAME_UPPER: the odd pad at the end
    cs.append(case("conv_integer_1d_same", "ConvInteger", [("x", x1), ("w", w1)], ["y"],
                   [acc.astype(np.int32)], domain="", opset=10, auto_pad="SAME_UPPER"))
    x, w = ints(np.int8, 1, 4, 5, 5), ints(np.int8, 3, 4, 3, 3)
    xs, xz, ws, wz = scales(1), ints(np.int8, 1), scales(3), np.zeros(3, np.int8)
    ys, yz = np.array(2.0, np.float32), ints(np.int8, 1)
    bias = rng.integers(-5000, 5000, size=3).astype(np.int32)
    acc = conv_int(x.astype(np.int64) - xz, w.astype(np.int64), [1, 1], [1, 1], [1, 1, 1, 1], 1)
    acc += bias.reshape(1, 3, 1, 1)
    m = (xs * ws / ys).astype(np.float32).reshape(1, 3, 1, 1)
    cs.append(case("qlinear_conv_bias", "QLinearConv",
                   [("x", x), ("xs", xs), ("xz", xz), ("w", w), ("ws", ws), ("wz", wz),
                    ("ys", ys), ("yz", yz), ("bias", bias)], ["y"],
                   [requantize(acc, m, yz, np.int8)], domain="", opset=10, pads=[1, 1, 1, 1]))
    # uint8 activations, int8 weights as initializers with zero zero points (what oneDNN's
    # int8 convolution-as-product takes), per-channel scales, strides and pads.
    x, w = ints(np.uint8, 2, 8, 9, 9), ints(np.int8, 6, 8, 3, 3)
    xs, xz, ws, wz = scales(), ints(np.uint8), scales(6), np.zeros(6, np.int8)
    ys, yz = np.array(4.0, np.float32), ints(np.uint8)
    acc = conv_int(x.astype(np.int64) - xz, w.astype(np.int64), [2, 2], [1, 1], [1, 1, 1, 1], 1)
    m = (xs * ws / ys).astype(np.float32).reshape(1, 6, 1, 1)
    cs.append(case("qlinear_conv_weights", "QLinearConv",
                   [("x", x), ("xs", xs), ("xz", xz), ("w", w), ("ws", ws), ("wz", wz),
                    ("ys", ys), ("yz", yz)], ["y"], [requantize(acc, m, yz, np.uint8)],
                   domain="", opset=10, consts=["w", "ws", "wz"], pads=[1, 1, 1, 1],
                   strides=[2, 2]))
    return cs


def f32_scale_sum(acc, m, bias=None):
    y = acc.astype(np.float32) * m.astype(np.float32)
    return (y + bias).astype(np.float32) if bias is not None else y.astype(np.float32)


def contrib_matmul_cases():
    cs = []
    a, b = ints(np.uint8, 2, 3, 5), ints(np.int8, 5, 4)
    sa, sb, az, bz = scales(), scales(4), ints(np.uint8), ints(np.int8, 4)
    bias = f32(4)
    acc = np.matmul(a.astype(np.int64) - az, b.astype(np.int64) - bz)
    cs.append(case("matmul_integer_to_float", "MatMulIntegerToFloat",
                   [("a", a), ("b", b), ("sa", sa), ("sb", sb), ("az", az), ("bz", bz),
                    ("bias", bias)], ["y"], [f32_scale_sum(acc, sa * sb, bias)]))
    x = f32(3, 6)
    b, sb, bz = ints(np.int8, 6, 5), scales(5), ints(np.int8, 5)
    xq, xs, xz = dynamic_quantize(x)
    acc = np.matmul(xq.astype(np.int64) - xz, b.astype(np.int64) - bz)
    cs.append(case("dynamic_quantize_matmul", "DynamicQuantizeMatMul",
                   [("x", x), ("b", b), ("sb", sb), ("bz", bz), ("bias", bias[:1].repeat(5))],
                   ["y"], [f32_scale_sum(acc, xs * sb, bias[:1].repeat(5))], consts=["b"]))
    a, b = ints(np.uint8, 3, 4), ints(np.uint8, 5, 4)  # transB
    sa, az, sb, bz = scales(), ints(np.uint8), scales(5), ints(np.uint8, 5)
    cbias = rng.integers(-3000, 3000, size=5).astype(np.int32)
    acc = np.matmul(a.astype(np.int64) - az, (b.astype(np.int64) - bz.reshape(5, 1)).T) + cbias
    m = (np.float32(0.5) * sa * sb).astype(np.float32)
    cs.append(case("qgemm_float", "QGemm", [("a", a), ("sa", sa), ("az", az), ("b", b),
                   ("sb", sb), ("bz", bz), ("c", cbias)], ["y"], [f32_scale_sum(acc, m)],
                   alpha=0.5, transB=1))
    ys, yz = np.array(0.3, np.float32), ints(np.int8)
    a8, az8 = ints(np.int8, 4, 3), ints(np.int8)
    acc = np.matmul((a8.astype(np.int64) - az8).T, b.astype(np.int64).T - bz)
    cs.append(case("qgemm_requantized", "QGemm", [("a", a8), ("sa", sa), ("az", az8), ("b", b),
                   ("sb", sb), ("bz", bz), ("c", None), ("ys", ys), ("yz", yz)], ["y"],
                   [requantize(acc, (sa * sb / ys).astype(np.float32), yz, np.int8)],
                   transA=1, transB=1))
    return cs


def deq(q, s, z):
    return (q.astype(np.int64) - z).astype(np.float32) * s


def contrib_pointwise_cases():
    cs = []
    for op, f, t in [("QLinearAdd", np.add, np.int8), ("QLinearMul", np.multiply, np.uint8)]:
        a, b = ints(t, 2, 3), ints(t, 3)
        sa, za, sb, zb, sc, zc = scales(), ints(t), scales(), ints(t), np.array(scales() * 4, np.float32), ints(t)
        real = f(deq(a, sa, za), deq(b, sb, zb)).astype(np.float32)
        cs.append(case(op.lower(), op, [("a", a), ("sa", sa), ("za", za), ("b", b), ("sb", sb),
                       ("zb", zb), ("sc", sc), ("zc", zc)], ["y"], [quantize(real, sc, zc, t)]))
    x, sx, zx, sy, zy = ints(np.uint8, 4, 5), scales(), ints(np.uint8), np.float32(1 / 256), np.uint8(0)
    sig = (1 / (1 + np.exp(-deq(x, sx, zx).astype(np.float64)))).astype(np.float32)
    cs.append(case("qlinear_sigmoid", "QLinearSigmoid", [("x", x), ("sx", sx), ("zx", zx),
                   ("sy", np.array(sy)), ("zy", np.array(zy))], ["y"],
                   [quantize(sig, np.array(sy), zy, np.uint8)]))
    r = deq(x, sx, zx)
    leaky = np.where(r < 0, r * np.float32(0.1), r).astype(np.float32)
    cs.append(case("qlinear_leaky_relu", "QLinearLeakyRelu", [("x", x), ("sx", sx), ("zx", zx),
                   ("sy", sx), ("zy", zx)], ["y"], [quantize(leaky, sx, zx, np.uint8)], alpha=0.1))
    x1, x2 = ints(np.int8, 2, 3, 2), ints(np.int8, 2, 1, 2)
    s1, z1, s2, z2, sy, zy = scales(), ints(np.int8), scales(), ints(np.int8), scales(), ints(np.int8)
    y = np.concatenate([quantize(deq(x1, s1, z1), sy, zy, np.int8),
                        quantize(deq(x2, s2, z2), sy, zy, np.int8)], axis=1)
    cs.append(case("qlinear_concat", "QLinearConcat", [("sy", sy), ("zy", zy), ("x1", x1),
                   ("s1", s1), ("z1", z1), ("x2", x2), ("s2", s2), ("z2", z2)], ["y"], [y],
                   axis=1))
    return cs


def contrib_pool_cases():
    cs = []
    x, sx, zx, sy, zy = ints(np.uint8, 2, 3, 4, 5), scales(), ints(np.uint8), scales(), ints(np.uint8)
    n = 20
    acc = x.astype(np.int64).sum((2, 3), keepdims=True) - zx.astype(np.int64) * n
    m = (sx / (sy * np.float32(n))).astype(np.float32)
    cs.append(case("qlinear_global_average_pool", "QLinearGlobalAveragePool",
                   [("x", x), ("sx", sx), ("zx", zx), ("sy", sy), ("zy", zy)], ["y"],
                   [requantize(acc, m, zy, np.uint8)]))
    xl = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    cs.append(case("qlinear_global_average_pool_nhwc", "QLinearGlobalAveragePool",
                   [("x", xl), ("sx", sx), ("zx", zx), ("sy", sy), ("zy", zy)], ["y"],
                   [requantize(acc, m, zy, np.uint8).transpose(0, 2, 3, 1)], channels_last=1))
    r = np.pad(deq(x, sx, zx), [(0, 0), (0, 0), (1, 1), (1, 1)])
    pooled = np.zeros((2, 3, 2, 3), np.float32)  # (4 + 2 - 3) // 2 + 1, (5 + 2 - 3) // 2 + 1
    for i in range(2):
        for j in range(3):
            pooled[:, :, i, j] = r[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3].sum((2, 3)) / np.float32(9)
    cs.append(case("qlinear_average_pool", "QLinearAveragePool",
                   [("x", x), ("sx", sx), ("zx", zx), ("sy", sy), ("zy", zy)], ["y"],
                   [quantize(pooled, sy, zy, np.uint8)], kernel_shape=[3, 3], strides=[2, 2],
                   pads=[1, 1, 1, 1], count_include_pad=1))
    return cs


def dq_lstm(x, w, r, b, h0, c0, ws, wz, rs, rz, direction):
    """com.microsoft.DynamicQuantizeLSTM as onnxruntime computes it on one thread: X quantized
    to uint8 once over all of it, each step's H over all of the batch (DynamicQuantizeLinear's
    formulas), exact integer products with the 8-bit weights minus their direction's first
    zero point, times (operand scale * weight scale) in float32; then the LSTM gates (i o f c)
    in float64. W: [dirs, input, 4h], R: [dirs, h, 4h]."""
    seq, batch, _ = x.shape
    dirs, hidden = w.shape[0], r.shape[1]
    sig = lambda v: 1 / (1 + np.exp(-v))

    def product(a, q8, scale, zero, d):
        qa, sa, za = dynamic_quantize(a.astype(np.float32))
        acc = (qa.astype(np.int64) - np.int64(za)) @ (q8[d].astype(np.int64) -
                                                       np.int64(zero[d].flat[0]))
        return acc.astype(np.float32) * (sa * np.broadcast_to(scale[d], (4 * hidden,)))

    y = np.zeros((seq, dirs, batch, hidden))
    yh, yc = np.zeros((dirs, batch, hidden)), np.zeros((dirs, batch, hidden))
    for d in range(dirs):
        xw = product(x.reshape(-1, x.shape[2]), w, ws, wz, d).reshape(seq, batch, 4 * hidden)
        h = np.zeros((batch, hidden)) if h0 is None else h0[d].astype(np.float64)
        cell = np.zeros((batch, hidden)) if c0 is None else c0[d].astype(np.float64)
        back = direction == "reverse" or d == 1
        for t in (reversed(range(seq)) if back else range(seq)):
            g = xw[t] + product(h, r, rs, rz, d)
            if b is not None:
                g = g + b[d, :4 * hidden] + b[d, 4 * hidden:]
            i, o, f, cc = np.split(g.astype(np.float64), 4, axis=1)
            cell = sig(f) * cell + sig(i) * np.tanh(cc)
            h = sig(o) * np.tanh(cell)
            y[t, d] = h
        yh[d], yc[d] = h, cell
    return y, yh, yc


def dynamic_lstm_cases():
    cs = []
    seq, batch, inp, hidden = 5, 3, 6, 4
    x = f32(seq, batch, inp)
    for name, dirs, t, per_row, extras in [("dq_lstm_int8", 1, np.int8, False, True),
                                           ("dq_lstm_uint8_bidirectional", 2, np.uint8, True,
                                            False),
                                           ("dq_lstm_int8_reverse", 1, np.int8, True, False)]:
        w, r = ints(t, dirs, inp, 4 * hidden), ints(t, dirs, hidden, 4 * hidden)
        shape = (dirs, 4 * hidden) if per_row else (dirs,)
        ws, rs = (scales(*shape) * 0.1).astype(np.float32), (scales(*shape) * 0.1).astype(np.float32)
        # onnxruntime takes int8 weights' zero points 0, uint8 ones all one value (checked
        # against it: equal to 2e-7 where its AVX2 uint8 x int8 sums do not saturate).
        zero = (lambda: np.zeros(shape, t)) if t == np.int8 else \
            (lambda: np.full(shape, ints(t, 1)[0], t))
        wz, rz = zero(), zero()
        b = f32(dirs, 8 * hidden) if extras else None
        h0 = f32(dirs, batch, hidden) if extras else None
        c0 = f32(dirs, batch, hidden) if extras else None
        direction = "bidirectional" if dirs == 2 else ("reverse" if "reverse" in name else
                                                        "forward")
        y, yh, yc = dq_lstm(x, w, r, b, h0, c0, ws, wz, rs, rz, direction)
        cs.append(case(name, "DynamicQuantizeLSTM",
                       [("x", x), ("w", w), ("r", r), ("b", b), ("lens", None), ("h0", h0),
                        ("c0", c0), ("p", None), ("ws", ws), ("wz", wz), ("rs", rs), ("rz", rz)],
                       ["y", "yh", "yc"], [y, yh, yc], consts=["w", "r", "ws", "wz", "rs", "rz"],
                       hidden_size=hidden, direction=direction))
    return cs


def max_pool_3x3_s2(a):
    """MaxPool of a [1, C, 7, 7] int64 tensor: 3x3 windows, strides 2, pads 1 (ignored)."""
    padded = np.pad(a, [(0, 0), (0, 0), (1, 1), (1, 1)], constant_values=-1)
    pooled = np.zeros(a.shape[:2] + (4, 4), np.int64)
    for i in range(4):
        for j in range(4):
            pooled[:, :, i, j] = padded[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3].max(axis=(2, 3))
    return pooled


def qdq_models():
    """QDQ graphs as onnxruntime's static quantizer writes them (DequantizeLinear of uint8
    activations and of int8 weights per output channel, an int32 bias, the float op, then
    QuantizeLinear): a Conv and a MatMul, which fuse_qdq turns into QLinearConv and
    QLinearMatMul. Expected: the QLinear formulas (exact int32 sums, requantized)."""
    from onnx import numpy_helper
    models = []
    x = ints(np.uint8, 1, 4, 7, 7)
    w = rng.integers(-127, 128, size=(5, 4, 3, 3)).astype(np.int8)
    xs, xz, ws, ys, yz = np.float32(0.05), np.uint8(120), scales(5), np.float32(0.3), np.uint8(100)
    bias = rng.integers(-2000, 2000, size=5).astype(np.int32)
    acc = conv_int(x.astype(np.int64) - xz, w.astype(np.int64), [1, 1], [1, 1], [1, 1, 1, 1], 1)
    acc += bias.reshape(1, 5, 1, 1)
    y = requantize(acc, (xs * ws / ys).astype(np.float32).reshape(1, 5, 1, 1), yz, np.uint8)
    inits = [numpy_helper.from_array(a, n) for n, a in [
        ("w", w), ("xs", np.array(xs)), ("xz", np.array(xz)), ("ws", ws),
        ("wz", np.zeros(5, np.int8)), ("ys", np.array(ys)), ("yz", np.array(yz)),
        ("b", bias), ("bs", (xs * ws).astype(np.float32)), ("bz", np.zeros(5, np.int32))]]
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"], axis=0),
             helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bf"], axis=0),
             helper.make_node("Conv", ["xf", "wf", "bf"], ["yf"], pads=[1, 1, 1, 1]),
             helper.make_node("QuantizeLinear", ["yf", "ys", "yz"], ["y"])]
    models.append(("qdq_conv", nodes, inits, [("x", x)], y))
    # Two of those around a MaxPool (its QDQ pair requantizes with the same parameters, so
    # the pool is exact on the integers): a region choose_conv_layout stores channels-last
    # where the backend's convolutions prefer it, uint8 windows masked at the edges.
    w2 = rng.integers(-127, 128, size=(6, 5, 3, 3)).astype(np.int8)
    ws2, ys2, yz2 = scales(6), np.float32(0.5), np.uint8(90)
    bias2 = rng.integers(-2000, 2000, size=6).astype(np.int32)
    pooled = max_pool_3x3_s2(y.astype(np.int64))
    acc2 = conv_int(pooled - yz, w2.astype(np.int64), [1, 1], [1, 1], [1, 1, 1, 1], 1)
    acc2 += bias2.reshape(1, 6, 1, 1)
    y2 = requantize(acc2, (ys * ws2 / ys2).astype(np.float32).reshape(1, 6, 1, 1), yz2, np.uint8)
    inits2 = inits + [numpy_helper.from_array(a, n) for n, a in [
        ("w2", w2), ("ws2", ws2), ("wz2", np.zeros(6, np.int8)), ("ys2", np.array(ys2)),
        ("yz2", np.array(yz2)), ("b2", bias2), ("bs2", (ys * ws2).astype(np.float32)),
        ("bz2", np.zeros(6, np.int32))]]
    nodes2 = nodes[:-1] + [
        helper.make_node("QuantizeLinear", ["yf", "ys", "yz"], ["q1"]),
        helper.make_node("DequantizeLinear", ["q1", "ys", "yz"], ["d1"]),
        helper.make_node("MaxPool", ["d1"], ["p1"], kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 1, 1, 1]),
        helper.make_node("QuantizeLinear", ["p1", "ys", "yz"], ["q2"]),
        helper.make_node("DequantizeLinear", ["q2", "ys", "yz"], ["d2"]),
        helper.make_node("DequantizeLinear", ["w2", "ws2", "wz2"], ["w2f"], axis=0),
        helper.make_node("DequantizeLinear", ["b2", "bs2", "bz2"], ["b2f"], axis=0),
        helper.make_node("Conv", ["d2", "w2f", "b2f"], ["y2f"], pads=[1, 1, 1, 1]),
        helper.make_node("QuantizeLinear", ["y2f", "ys2", "yz2"], ["y"])]
    models.append(("qdq_conv_pool_conv", nodes2, inits2, [("x", x)], y2))
    # A ReLU6 and a MaxPool between QDQ pairs of one scale and zero point, as other
    # quantizers write them (fold_qdq_pairs: the Clip becomes the QLinearConv's saturation
    # range [Q(0), Q(6)], the pool runs on the integers), and a Reshape after a pair.
    ys3, yz3 = np.float32(0.05), np.uint8(100)
    y3 = requantize(acc, (xs * ws / ys3).astype(np.float32).reshape(1, 5, 1, 1), yz3, np.uint8)
    q6 = int(np.rint(np.float32(6) / ys3)) + int(yz3)
    clipped = np.clip(y3.astype(np.int64), int(yz3), q6)
    pooled3 = max_pool_3x3_s2(clipped)
    inits3 = inits + [numpy_helper.from_array(a, n) for n, a in [
        ("ys3", np.array(ys3)), ("yz3", np.array(yz3)), ("lo", np.array(np.float32(0))),
        ("hi", np.array(np.float32(6))), ("flat", np.array([1, -1], np.int64))]]
    nodes3 = nodes[:-1] + [
        helper.make_node("QuantizeLinear", ["yf", "ys3", "yz3"], ["q1"]),
        helper.make_node("DequantizeLinear", ["q1", "ys3", "yz3"], ["d1"]),
        helper.make_node("Clip", ["d1", "lo", "hi"], ["r1"]),
        helper.make_node("QuantizeLinear", ["r1", "ys3", "yz3"], ["q2"]),
        helper.make_node("DequantizeLinear", ["q2", "ys3", "yz3"], ["d2"]),
        helper.make_node("MaxPool", ["d2"], ["p2"], kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 1, 1, 1]),
        helper.make_node("QuantizeLinear", ["p2", "ys3", "yz3"], ["q3"]),
        helper.make_node("DequantizeLinear", ["q3", "ys3", "yz3"], ["d3"]),
        helper.make_node("Reshape", ["d3", "flat"], ["f3"]),
        helper.make_node("QuantizeLinear", ["f3", "ys3", "yz3"], ["y"])]
    models.append(("qdq_conv_relu6_pool", nodes3, inits3, [("x", x)],
                   pooled3.reshape(1, -1).astype(np.uint8)))
    a = ints(np.uint8, 3, 6)
    b = rng.integers(-127, 128, size=(6, 4)).astype(np.int8)
    bs = scales(4)
    acc = np.matmul(a.astype(np.int64) - xz, b.astype(np.int64))
    y = requantize(acc, (xs * bs / ys).astype(np.float32), yz, np.uint8)
    inits = [numpy_helper.from_array(v, n) for n, v in [
        ("b", b), ("xs", np.array(xs)), ("xz", np.array(xz)), ("bs", bs),
        ("bz", np.zeros(4, np.int8)), ("ys", np.array(ys)), ("yz", np.array(yz))]]
    nodes = [helper.make_node("DequantizeLinear", ["a", "xs", "xz"], ["af"]),
             helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bf"], axis=1),
             helper.make_node("MatMul", ["af", "bf"], ["yf"]),
             helper.make_node("QuantizeLinear", ["yf", "ys", "yz"], ["y"])]
    models.append(("qdq_matmul", nodes, inits, [("a", a)], y))
    return models


def check_qdq(cli, work, backend):
    failures = 0
    for name, nodes, inits, inputs, want in qdq_models():
        ins = [helper.make_tensor_value_info(n, TensorProto.UINT8, list(v.shape)) for n, v in inputs]
        graph = helper.make_graph(nodes, name, ins,
                                  [helper.make_tensor_value_info("y", TensorProto.UINT8, None)],
                                  initializer=inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        path = os.path.join(work, name + ".onnx")
        onnx.save(model, path)
        feeds = {}
        for n, v in inputs:
            feeds[n] = os.path.join(work, f"{name}_{n}.npy")
            np.save(feeds[n], v)
        out = os.path.join(work, f"{name}_{backend}")
        r = run(cli, path, feeds, out, backend)
        fused = subprocess.run(shlex.split(cli) + ["inspect", path], capture_output=True,
                               text=True).stdout
        got = np.load(os.path.join(out, "y.npy")) if r.returncode == 0 else None
        extern = "ConvInteger" if "conv" in name else "MatMulInteger"
        ok = got is not None and np.array_equal(got, want) and extern in fused
        print(f"{'ok  ' if ok else 'FAIL'} {name} {backend}: "
              f"{'fused into ' + extern if extern in fused else 'not fused'}, "
              f"{'exit ' + str(r.returncode) + ' ' + r.stderr.strip()[:120] if got is None else str(int((got != want).sum())) + ' differ'}")
        failures += not ok
    return failures


def dynamic_mlp():
    """Two layers as quantize_dynamic.py (onnxruntime's dynamic quantizer) writes them:
    DynamicQuantizeLinear of the float input, MatMulInteger by int8 weights (per tensor, or
    per column), Cast, times the product of the scales, plus the bias; a Relu between.
    Expected: the same arithmetic in numpy (exact integer sums, float32 elsewhere)."""
    from onnx import numpy_helper
    x = (f32(5, 24) * 3).astype(np.float32)
    layers, nodes, inits, h, want = [(24, 16), (16, 7)], [], [], "x", x
    for i, (k, n) in enumerate(layers):
        w = rng.integers(-127, 128, size=(k, n)).astype(np.int8)
        ws = scales(n) if i == 0 else np.array(np.float32(0.02))
        bias = f32(n)
        p = f"l{i}_"
        inits += [numpy_helper.from_array(a, p + nm) for nm, a in [
            ("w", w), ("wz", np.zeros(n if ws.ndim else 1, np.int8).reshape(ws.shape)),
            ("ws", ws), ("b", bias)]]
        nodes += [helper.make_node("DynamicQuantizeLinear", [h], [p + "q", p + "s", p + "z"]),
                  helper.make_node("MatMulInteger", [p + "q", p + "w", p + "z", p + "wz"],
                                   [p + "acc"]),
                  helper.make_node("Cast", [p + "acc"], [p + "accf"], to=TensorProto.FLOAT),
                  helper.make_node("Mul", [p + "s", p + "ws"], [p + "scale"]),
                  helper.make_node("Mul", [p + "accf", p + "scale"], [p + "m"]),
                  helper.make_node("Add", [p + "m", p + "b"], [p + "y"])]
        q, qs, qz = dynamic_quantize(want)
        acc = np.matmul(q.astype(np.int64) - np.int64(qz), w.astype(np.int64))
        want = acc.astype(np.float32) * (np.float32(qs) * ws) + bias
        h = p + "y"
        if i + 1 < len(layers):
            nodes.append(helper.make_node("Relu", [h], [p + "r"]))
            h, want = p + "r", np.maximum(want, np.float32(0))
    nodes.append(helper.make_node("Identity", [h], ["y"]))
    return nodes, inits, x, want.astype(np.float32)


def check_dynamic_mlp(cli, work, backend):
    nodes, inits, x, want = dynamic_mlp()
    graph = helper.make_graph(
        nodes, "dynamic_mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path = os.path.join(work, "dynamic_mlp.onnx")
    onnx.save(model, path)
    feed = os.path.join(work, "dynamic_mlp_x.npy")
    np.save(feed, x)
    out = os.path.join(work, f"dynamic_mlp_{backend}")
    r = run(cli, path, {"x": feed}, out, backend)
    got = np.load(os.path.join(out, "y.npy")) if r.returncode == 0 else None
    err = float(np.abs(got - want).max() / np.abs(want).max()) if got is not None else None
    ok = got is not None and got.shape == want.shape and err <= 1e-6
    print(f"{'ok  ' if ok else 'FAIL'} dynamic_mlp {backend}: "
          f"{'exit ' + str(r.returncode) + ' ' + r.stderr.strip()[:120] if got is None else f'max rel err {err:.2e}'}")
    return not ok


def bad_scale_model():
    node = helper.make_node("QuantizeLinear", ["x", "s"], ["y"], axis=1)
    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
           helper.make_tensor_value_info("s", TensorProto.FLOAT, [2])]
    graph = helper.make_graph([node], "bad", ins,
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model, [("x", f32(2, 3)), ("s", scales(2))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True,
                    help="the ferrite CLI, as a command line (e.g. 'node build/wasm/bin/ferrite.js')")
    ap.add_argument("--work", required=True)
    ap.add_argument("--backends", default="reference,portable")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    cases = (quantize_cases() + dequantize_cases() + dynamic_cases() + matmul_cases() +
             conv_cases() + contrib_matmul_cases() + contrib_pointwise_cases() +
             contrib_pool_cases() + dynamic_lstm_cases())
    nbits = nbits_cases()
    failures = 0
    for backend in a.backends.split(","):
        for c in cases:
            failures += not check_case(a.cli, a.work, c, backend, TOLERANCE)
        for c in nbits:
            failures += not check_case(a.cli, a.work, c, backend, quant_nbits.TOLERANCE)
        failures += check_qdq(a.cli, a.work, backend)
        failures += check_dynamic_mlp(a.cli, a.work, backend)
        failures += check_block_weights(a.cli, a.work, backend)
        model, inputs = bad_scale_model()
        failures += not check_error(a.cli, a.work, "quantize_bad_scale", model, inputs, backend,
                                    ["QuantizeLinear", "'s'", "[2]"])
    print(f"quant_check: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
