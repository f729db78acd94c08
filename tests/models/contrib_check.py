#!/usr/bin/python3
"""onnxruntime's com.microsoft contrib ops against numpy formulas.

Writes one small model per case with python3-onnx (Gelu, FastGelu, BiasGelu, QuickGelu,
BiasAdd, SkipLayerNormalization, SkipSimplifiedLayerNormalization,
SimplifiedLayerNormalization, EmbedLayerNormalization, RotaryEmbedding, MultiHeadAttention;
the semantics of onnxruntime's ContribOperators documentation; ONNX's Det on larger
matrices than the node suites'; the ai.onnx.ml cases of ml_cases.py and the ONNX forms of
onnx_cases.py), runs each through the ferrite CLI on every given backend
and compares every output with numpy: the largest absolute error relative to
the largest |expected| must be <= 1e-5 (exact for integer outputs). Also checks that a bad
input id fails the run with an error naming the node. Exits 1 on any mismatch.

  /usr/bin/python3 tests/models/contrib_check.py --cli build/native/bin/ferrite --work DIR
"""
import argparse
import math
import os
import sys

import numpy as np
from onnx import TensorProto, helper

from ml_cases import check_unknown_category, ml_cases
from onnx_cases import onnx_cases
from op_check import MS, ONNX_TYPE, case, check_case, check_error

TOLERANCE = 1e-5
rng = np.random.default_rng(7)


def erf(x):
    return np.vectorize(math.erf)(x.astype(np.float64))


def gelu(x):
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def layer_norm(s, gamma, beta, eps):
    mean = s.mean(-1, keepdims=True)
    inv = 1 / np.sqrt(((s - mean) ** 2).mean(-1, keepdims=True) + eps)
    y = (s - mean) * inv * gamma
    return (y + beta if beta is not None else y), mean, inv


def rms_norm(s, gamma, eps):
    inv = 1 / np.sqrt((s ** 2).mean(-1, keepdims=True) + eps)
    return s * inv * gamma, inv


def rotary(x, pos, cos, sin, interleaved):
    """x [B, S, H, D]; pos [B, S]; caches [P, D/2]."""
    c, s = cos[pos][:, :, None, :], sin[pos][:, :, None, :]
    if interleaved:
        x1, x2 = x[..., 0::2], x[..., 1::2]
    else:
        x1, x2 = np.split(x, 2, axis=-1)
    real, imag = c * x1 - s * x2, s * x1 + c * x2
    if interleaved:
        return np.stack([real, imag], axis=-1).reshape(x.shape)
    return np.concatenate([real, imag], axis=-1)


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def mha(q, k, v, heads, bias=None, kpm=None, ab=None, pk=None, pv=None, causal=False,
        filt=-10000.0):
    """MultiHeadAttention over [B, S, H*D] inputs; returns output, present_key, present_value."""
    if bias is not None:
        dq, dk = q.shape[2], k.shape[2]
        q, k, v = q + bias[:dq], k + bias[dq:dq + dk], v + bias[dq + dk:]

    def split(t):
        b, s, hd = t.shape
        return t.reshape(b, s, heads, hd // heads).transpose(0, 2, 1, 3)

    q4, k4, v4 = split(q), split(k), split(v)
    past = 0
    if pk is not None:
        past = pk.shape[2]
        k4, v4 = np.concatenate([pk, k4], 2), np.concatenate([pv, v4], 2)
    s_len, t_len = q4.shape[2], k4.shape[2]
    scores = (q4.astype(np.float64) @ k4.transpose(0, 1, 3, 2)) / math.sqrt(q4.shape[3])
    hidden = np.zeros((q.shape[0], 1, s_len, t_len), dtype=bool)
    j = np.arange(t_len)
    if kpm is not None and kpm.ndim == 1 and kpm.shape[0] == 2 * q.shape[0]:  # ends, starts
        b = q.shape[0]
        out = (j[None, :] >= kpm[:b, None]) | (j[None, :] < kpm[b:, None])
        hidden |= out[:, None, None, :]
    elif kpm is not None and kpm.ndim == 1:
        hidden |= (j[None, :] >= kpm[:, None])[:, None, None, :]
    elif kpm is not None and kpm.ndim == 2:
        hidden |= (kpm == 0)[:, None, None, :]
    elif kpm is not None:
        hidden |= (kpm == 0)[:, None, :, :]
    if causal:
        hidden |= (j[None, :] > (np.arange(s_len) + past)[:, None])[None, None]
    scores = scores + np.where(hidden, filt, 0.0)
    if ab is not None:
        scores = scores + ab
    y = softmax(scores) @ v4
    b, h, s, dv = y.shape
    return y.transpose(0, 2, 1, 3).reshape(b, s, h * dv).astype(np.float32), k4, v4


def attention(x, w, bias, heads, parts=None, mask=None, past=None, ab=None, causal=False):
    """com.microsoft Attention: x w + bias split into query, key and value (qkv_hidden_sizes
    `parts`, else thirds), then MultiHeadAttention's formula with mask_index `mask` and past
    [2, B, H, P, D]; returns output and present [2, B, H, T, D]."""
    qkv = x.astype(np.float64) @ w + (0 if bias is None else bias)
    p0, p1 = parts[:2] if parts else (w.shape[1] // 3,) * 2
    q, k, v = qkv[..., :p0], qkv[..., p0:p0 + p1], qkv[..., p0 + p1:]
    pk, pv = (None, None) if past is None else (past[0], past[1])
    y, k4, v4 = mha(q, k, v, heads, kpm=mask, ab=ab, pk=pk, pv=pv, causal=causal)
    present = np.stack([k4, v4]).astype(np.float32) if k4.shape == v4.shape else None
    return y, present


def gqa(q, k, v, pk, pv, seqlens, total, heads, kv_heads, cos=None, sin=None, pos=None,
        interleaved=False, softcap=0.0, window=-1, sink=None, smooth=False, ab=None):
    """GroupQueryAttention as onnxruntime's CPU kernel computes it (contrib_gqa_ops.cc's
    comment): returns output, present_key, present_value."""
    b_n, s_n = q.shape[:2]
    head = q.shape[2] // heads
    lens = seqlens.astype(np.int64) + 1
    start = np.zeros(b_n, np.int64) if s_n == total else lens - s_n
    past = 0 if pk is None else pk.shape[2]
    t_n = max(total, past)
    split = lambda t, n: t.reshape(b_n, s_n, n, head).astype(np.float64)
    qh, kh, vh = split(q, heads), split(k, kv_heads), split(v, kv_heads)
    if cos is not None:
        at = pos[:, :s_n] if pos is not None else start[:, None] + np.arange(s_n)[None, :]
        rot = 2 * cos.shape[1]  # the first rot dims of a head rotate, the rest stay
        turn = lambda t: np.concatenate(
            [rotary(t[..., :rot], at, cos, sin, interleaved), t[..., rot:]], axis=-1)
        qh, kh = turn(qh), turn(kh)
    qh, kh, vh = (t.transpose(0, 2, 1, 3) for t in (qh, kh, vh))
    pres = [np.zeros((b_n, kv_heads, t_n, head)) for _ in range(2)]
    for b in range(b_n):
        for p, old, new in ((pres[0], pk, kh), (pres[1], pv, vh)):
            if old is not None:
                p[b, :, :start[b]] = old[b, :, :start[b]]
            p[b, :, start[b]:start[b] + s_n] = new[b]
    out = np.zeros((b_n, heads, s_n, head))
    group = heads // kv_heads
    scale = 1 / math.sqrt(head)
    for b in range(b_n):
        for h in range(heads):
            for i in range(s_n):
                c = start[b] + i + 1
                j = np.arange(t_n)
                keep = (j < c) & (j < lens[b]) & ((j >= c - window) if window >= 0 else True)
                x = scale * (pres[0][b, h // group] @ qh[b, h, i])
                if softcap > 0:
                    x = softcap * np.tanh(x / softcap)
                if ab is not None:
                    x[:total] += ab[b % ab.shape[0], h % ab.shape[1], i]
                x = x[keep]
                m = x.max()
                e = np.exp(x - m)
                if sink is not None or smooth:
                    z = 0.0 if sink is None else float(sink[h])
                    m2 = max(m, z)
                    e = np.exp(x - m2)
                    p = e / (np.exp(z - m2) + e.sum())
                else:
                    p = e / e.sum()
                out[b, h, i] = p @ pres[1][b, h // group][keep]
    y = out.transpose(0, 2, 1, 3).reshape(b_n, s_n, heads * head).astype(np.float32)
    return y, pres[0].astype(np.float32), pres[1].astype(np.float32)


def gqa_cases():
    cases = []
    outs = ["y", "present_key", "present_value"]
    i32 = lambda *v: np.array(v, dtype=np.int32)

    def add(name, q, k, v, pk, pv, seqlens, total, heads, kv, extra=(), **attrs):
        want = gqa(q, k, v, pk, pv, seqlens, total, heads, kv,
                   **{key: val for key, val in attrs.items() if key in GQA_ORACLE_ARGS})
        node_attrs = {key: val for key, val in attrs.items()
                      if key not in GQA_ORACLE_ARGS or key == "softcap"}
        inputs = [("q", q), ("k", k), ("v", v), ("pk", pk), ("pv", pv),
                  ("seqlens", seqlens), ("total", i32(total))] + list(extra)
        cases.append(case(name, "GroupQueryAttention", inputs, outs, list(want), num_heads=heads,
                          kv_num_heads=kv, **node_attrs))

    # A first prompt (no past), 4 query heads on 2 kv heads of 16.
    add("gqa_prompt", f32(2, 4, 64), f32(2, 4, 32), f32(2, 4, 32), None, None, i32(3, 3), 4, 4, 2)
    # Decoding one token after a past of 5, batch 1 shorter (its token lands at row 3; rows
    # after it zeros); softcap and an attention bias.
    ab = f32(2, 1, 1, 6)
    add("gqa_decode_softcap_bias", f32(2, 1, 64), f32(2, 1, 16), f32(2, 1, 16), f32(2, 1, 5, 16),
        f32(2, 1, 5, 16), i32(5, 3), 6, 4, 1,
        extra=[("cos", None), ("sin", None), ("pos", None), ("ab", ab)], softcap=2.0, ab=ab)
    # Rotary from caches at the tokens' positions, a local window of 2, sinks per head.
    cos, sin = f32(8, 8), f32(8, 8)
    sink = f32(4)
    add("gqa_rotary_window_sink", f32(1, 5, 64), f32(1, 5, 32), f32(1, 5, 32), None, None,
        i32(4), 5, 4, 2,
        extra=[("cos", cos), ("sin", sin), ("pos", None), ("ab", None), ("sink", sink)],
        cos=cos, sin=sin, window=2, sink=sink, do_rotary=1, local_window_size=2)
    # A second prompt of 3 after 4 tokens, interleaved rotary of half of each head (32) at
    # given positions.
    pos = np.array([[4, 5, 6]], dtype=np.int64)
    cos8, sin8 = f32(8, 8), f32(8, 8)
    add("gqa_second_prompt_positions", f32(1, 3, 64), f32(1, 3, 32), f32(1, 3, 32),
        f32(1, 1, 4, 32), f32(1, 1, 4, 32), i32(6), 7, 2, 1,
        extra=[("cos", cos8), ("sin", sin8), ("pos", pos)], cos=cos8, sin=sin8, pos=pos,
        interleaved=True, do_rotary=1, rotary_interleaved=1)
    return cases


GQA_ORACLE_ARGS = {"cos", "sin", "pos", "interleaved", "softcap", "window", "sink", "smooth", "ab"}


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def make_cases():
    cases = []
    x, b = f32(2, 5, 8), f32(8)
    cases.append(case("gelu", "Gelu", [("x", x)], ["y"], [gelu(x)]))
    cases.append(case("fast_gelu_bias", "FastGelu", [("x", x), ("b", b)], ["y"],
                      [gelu_tanh(x + b)]))
    cases.append(case("fast_gelu", "FastGelu", [("x", x)], ["y"], [gelu_tanh(x)]))
    cases.append(case("bias_gelu", "BiasGelu", [("a", x), ("b", b)], ["y"], [gelu(x + b)]))
    cases.append(case("quick_gelu", "QuickGelu", [("x", x)], ["y"], [x * sigmoid(1.5 * x)],
                      alpha=1.5))
    skip = f32(2, 5, 8)
    cases.append(case("bias_add", "BiasAdd", [("x", x), ("b", b), ("s", skip)], ["y"],
                      [x + b + skip]))
    gamma, beta, bias = f32(8), f32(8), f32(8)
    s = x + skip + bias
    y, mean, inv = layer_norm(s, gamma, beta, 1e-5)
    cases.append(case("skip_layer_norm", "SkipLayerNormalization",
                      [("x", x), ("skip", skip), ("gamma", gamma), ("beta", beta), ("bias", bias)],
                      ["y", "mean", "inv_std", "sum"], [y, mean, inv, s], epsilon=1e-5))
    skip2 = f32(5, 8)
    y2, _, _ = layer_norm(x + skip2, gamma, None, 1e-12)
    cases.append(case("skip_layer_norm_2d_skip", "SkipLayerNormalization",
                      [("x", x), ("skip", skip2), ("gamma", gamma)], ["y"], [y2]))
    ys, inv_s = rms_norm(s, gamma, 1e-6)
    cases.append(case("skip_simplified_layer_norm", "SkipSimplifiedLayerNormalization",
                      [("x", x), ("skip", skip), ("gamma", gamma), ("bias", bias)],
                      ["y", "", "inv_std", "sum"], [ys, None, inv_s, s], epsilon=1e-6))
    x4 = f32(2, 3, 4, 6)
    scale = f32(4, 6)
    flat = x4.reshape(6, 24)
    inv4 = 1 / np.sqrt((flat ** 2).mean(-1, keepdims=True) + 1e-5)
    for domain in (MS, ""):
        cases.append(case(f"simplified_layer_norm_axis2{'_ms' if domain else ''}",
                          "SimplifiedLayerNormalization", [("x", x4), ("scale", scale)],
                          ["y", "inv_std"],
                          [(flat * inv4).reshape(x4.shape) * scale, inv4.reshape(2, 3, 1, 1)],
                          domain=domain, axis=2, epsilon=1e-5))
    # EmbedLayerNormalization: word + position + segment embeddings, mask counts.
    ids = rng.integers(0, 30, (2, 5)).astype(np.int32)
    seg = rng.integers(0, 2, (2, 5)).astype(np.int32)
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=np.int32)
    word, pos, segt = f32(30, 8), f32(16, 8), f32(2, 8)
    emb = word[ids] + pos[np.arange(5)][None] + segt[seg]
    ye, _, _ = layer_norm(emb, gamma, beta, 1e-12)
    cases.append(case("embed_layer_norm", "EmbedLayerNormalization",
                      [("ids", ids), ("seg", seg), ("word", word), ("pos", pos), ("segt", segt),
                       ("gamma", gamma), ("beta", beta), ("mask", mask)],
                      ["y", "mask_index", "sum"], [ye, mask.sum(1).astype(np.int32), emb]))
    # RotaryEmbedding: position_ids as an offset [1] and as [B, S]; 3-D and 4-D inputs.
    cos_t, sin_t = f32(32, 4), f32(32, 4)
    xr = f32(2, 5, 2 * 8)  # [B, S, H*D], 2 heads of 8
    for interleaved in (0, 1):
        want = rotary(xr.reshape(2, 5, 2, 8), np.arange(3, 8)[None].repeat(2, 0), cos_t, sin_t,
                      interleaved).reshape(2, 5, 16)
        cases.append(case(f"rotary_offset_interleaved{interleaved}", "RotaryEmbedding",
                          [("x", xr), ("p", np.array([3], dtype=np.int64)), ("cos", cos_t),
                           ("sin", sin_t)], ["y"], [want], interleaved=interleaved, num_heads=2))
    pids = rng.integers(0, 32, (2, 5)).astype(np.int64)
    x4r = f32(2, 2, 5, 8)  # [B, H, S, D]
    want = rotary(x4r.transpose(0, 2, 1, 3), pids, cos_t, sin_t, 0).transpose(0, 2, 1, 3)
    cases.append(case("rotary_4d_position_ids", "RotaryEmbedding",
                      [("x", x4r), ("p", pids), ("cos", cos_t), ("sin", sin_t)], ["y"], [want]))
    # MultiHeadAttention: 2 heads of 4 (values 3), queries 3, keys 5.
    q, k, v = f32(2, 3, 8), f32(2, 5, 8), f32(2, 5, 6)
    outs = ["y", "present_k", "present_v"]
    cases.append(case("mha", "MultiHeadAttention", [("q", q), ("k", k), ("v", v)], outs,
                      list(mha(q, k, v, 2)), num_heads=2))
    bias, lens, ab = f32(22), np.array([5, 2], dtype=np.int32), f32(1, 2, 3, 5)
    cases.append(case("mha_bias_lengths_attention_bias", "MultiHeadAttention",
                      [("q", q), ("k", k), ("v", v), ("bias", bias), ("kpm", lens), ("ab", ab)],
                      outs, list(mha(q, k, v, 2, bias=bias, kpm=lens, ab=ab)), num_heads=2))
    # (onnxruntime wants value heads of the query's size with a past: 4 here)
    v8, pk, pv = f32(2, 5, 8), f32(2, 2, 4, 4), f32(2, 2, 4, 4)
    mask2 = rng.integers(0, 2, (2, 9)).astype(np.int32)
    mask2[:, 0] = 1
    cases.append(case("mha_past_causal_mask2d", "MultiHeadAttention",
                      [("q", q), ("k", k), ("v", v8), ("", None), ("kpm", mask2), ("", None),
                       ("pk", pk), ("pv", pv)],
                      outs, list(mha(q, k, v8, 2, kpm=mask2, pk=pk, pv=pv, causal=True)),
                      num_heads=2, unidirectional=1))
    mask3 = rng.integers(0, 2, (2, 3, 5)).astype(np.int32)
    cases.append(case("mha_mask3d_filter", "MultiHeadAttention",
                      [("q", q), ("k", k), ("v", v), ("", None), ("kpm", mask3)], outs,
                      list(mha(q, k, v, 2, kpm=mask3, filt=-30.0)), num_heads=2,
                      mask_filter_value=-30.0))
    # Attention: input 7 wide, 2 heads of 4 (values 3 with qkv_hidden_sizes), 3 tokens.
    x, w, bw = f32(2, 3, 7), f32(7, 24), f32(24)
    ins = lambda *rest: [("x", x), ("w", w)] + list(rest)
    cases.append(case("attention", "Attention", ins(), ["y"], [attention(x, w, None, 2)[0]],
                      consts=["w"], num_heads=2))
    ends = np.array([3, 2], dtype=np.int32)
    cases.append(case("attention_bias_end_positions", "Attention",
                      ins(("b", bw), ("mask", ends)), ["y", "present"],
                      list(attention(x, w, bw, 2, mask=ends)), consts=["w", "b"], num_heads=2))
    ends_starts = np.array([5, 4, 1, 2], dtype=np.int32)
    past = f32(2, 2, 2, 2, 4)
    cases.append(case("attention_past_causal_ends_starts", "Attention",
                      ins(("b", bw), ("mask", ends_starts), ("past", past)), ["y", "present"],
                      list(attention(x, w, bw, 2, mask=ends_starts, past=past, causal=True)),
                      consts=["w", "b"], num_heads=2, unidirectional=1))
    w22, b22 = f32(7, 22), f32(22)
    raw = rng.integers(0, 2, (2, 3)).astype(np.int32)
    raw[:, 0] = 1
    ab = f32(2, 1, 3, 3)
    cases.append(case("attention_qkv_sizes_raw_mask_bias", "Attention",
                      [("x", x), ("w", w22), ("b", b22), ("mask", raw), ("", None), ("ab", ab)],
                      ["y"], [attention(x, w22, b22, 2, parts=[8, 8, 6], mask=raw, ab=ab)[0]],
                      consts=["w", "b"], num_heads=2, qkv_hidden_sizes=[8, 8, 6]))
    cases += gqa_cases() + ml_cases() + onnx_cases()
    # Det (ONNX; the node suites have only 2 x 2 cases): larger, batched, needing row swaps,
    # singular, and a zero leading entry.
    m = f32(3, 6, 6)
    m[1, 5] = m[1, 0] * 2  # singular
    m[2, 0, 0] = 0
    cases.append(case("det_batched_6x6", "Det", [("m", m)], ["d"],
                      [np.linalg.det(m.astype(np.float64)).astype(np.float32)], domain=""))
    return cases


def check_bad_id(a, backend):
    """An input id past the word table: the run fails naming the node, never reads past it."""
    gamma = f32(8)
    inputs = [("ids", np.array([[1, 40]], dtype=np.int32)), ("seg", None), ("word", f32(30, 8)),
              ("pos", f32(4, 8)), ("segt", None), ("gamma", gamma), ("beta", gamma)]
    present = [(n, arr) for n, arr in inputs if arr is not None]
    node_inputs = [n if arr is not None else "" for n, arr in inputs]
    node = helper.make_node("EmbedLayerNormalization", node_inputs, ["y"], domain=MS)
    ins = [helper.make_tensor_value_info(n, ONNX_TYPE[arr.dtype], list(arr.shape))
           for n, arr in present]
    graph = helper.make_graph([node], "bad", ins,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid(MS, 1)])
    model.ir_version = 8
    return check_error(a.cli, a.work, "embed_bad_id", model, present, backend,
                       ["EmbedLayerNormalization", "word_embedding"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True,
                    help="the ferrite CLI, as a command line (e.g. 'node build/wasm/bin/ferrite.js')")
    ap.add_argument("--work", required=True)
    ap.add_argument("--backends", default="reference,portable")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    failures = 0
    cases = make_cases()
    for backend in a.backends.split(","):
        for c in cases:
            failures += not check_case(a.cli, a.work, c, backend, TOLERANCE)
        failures += not check_bad_id(a, backend)
        failures += not check_unknown_category(a, backend)
    print(f"contrib_check: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
