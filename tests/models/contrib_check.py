#!/usr/bin/python3
"""onnxruntime's com.microsoft contrib ops against numpy formulas.

Writes one small model per case with python3-onnx (Gelu, FastGelu, BiasGelu, QuickGelu,
BiasAdd, SkipLayerNormalization, SkipSimplifiedLayerNormalization,
SimplifiedLayerNormalization, EmbedLayerNormalization, RotaryEmbedding, MultiHeadAttention;
the semantics of onnxruntime's ContribOperators documentation; and ONNX's Det on larger
matrices than the node suites'), runs each through the ferrite CLI on every given backend
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
from onnx import TensorProto, helper, numpy_helper

from op_check import ML, MS, ONNX_TYPE, case, check_case, check_error

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


def tree_ensemble(x, roots, feature, split, mode, true_id, true_leaf, false_id, false_leaf,
                  missing, members, leaf_target, leaf_weight, targets, aggregate):
    """ai.onnx.ml TreeEnsemble by walking each tree per sample (modes LEQ LT GTE GT EQ NEQ
    MEMBER; a NaN x goes where `missing` says), aggregated as ONNX's reference does (a root
    whose branches are one leaf is the leaf at the root's index) but for the targets no tree
    reaches: 0, as onnxruntime gives them."""
    combine = [lambda a, w: a + w, lambda a, w: a + w, min, max][aggregate]
    tests = [lambda v, s: v <= s, lambda v, s: v < s, lambda v, s: v >= s,
             lambda v, s: v > s, lambda v, s: v == s, lambda v, s: v != s]
    y = np.full((x.shape[0], targets), [0.0, 0.0, np.inf, -np.inf][aggregate])
    for n in range(x.shape[0]):
        for root in roots:
            node = root
            if true_leaf[root] and false_leaf[root] and true_id[root] == false_id[root]:
                y[n, leaf_target[root]] = combine(y[n, leaf_target[root]], leaf_weight[root])
                continue
            while True:
                v = float(x[n, feature[node]])
                if math.isnan(v):
                    cond = bool(missing[node])
                elif mode[node] == 6:
                    cond = v in members[node]
                else:
                    cond = bool(tests[mode[node]](v, split[node]))
                nxt, leaf = (true_id[node], true_leaf[node]) if cond else \
                    (false_id[node], false_leaf[node])
                if leaf:
                    y[n, leaf_target[nxt]] = combine(y[n, leaf_target[nxt]], leaf_weight[nxt])
                    break
                node = nxt
    if aggregate == 0:
        y /= len(roots)
    y[np.isinf(y)] = 0  # a target no tree reaches (onnxruntime's 0; the reference's extremes)
    return y.astype(x.dtype)


def ml_cases():
    cases = []
    x = f32(4, 5)
    cases.append(case("binarizer_threshold", "Binarizer", [("x", x)], ["y"],
                      [(x > 0.25).astype(np.float32)], domain=ML, threshold=0.25))
    idx = np.array([[4, 0], [2, 2]], dtype=np.int64)
    x3 = f32(2, 3, 5)
    cases.append(case("array_feature_extractor_2d_indices", "ArrayFeatureExtractor",
                      [("x", x3), ("i", idx)], ["y"], [x3[..., idx.ravel()]], domain=ML))
    x1 = f32(5)
    cases.append(case("array_feature_extractor_1d", "ArrayFeatureExtractor",
                      [("x", x1), ("i", np.array([3, 1], dtype=np.int64))], ["y"],
                      [x1[[3, 1]].reshape(1, 2)], domain=ML))
    # Three trees over 3 features, every comparison mode, a member node, NaN inputs tracked
    # to the true side at node 1, 3 targets; the third tree is one leaf (its root's two
    # branches are leaf 6, so it is leaf 6... at its root's index, as ONNX's reference reads
    # it); every aggregation.
    xt = f32(7, 3)
    xt[1, 0] = np.nan
    xt[2, 2] = np.nan
    xt[3, 1] = 1.5
    xt[4, 1] = 2.0
    feature = [0, 1, 2, 1, 2, 0, 0]
    split = [0.1, -0.2, 0.3, 0.0, 0.5, -0.4, 0.0]
    mode = [0, 1, 2, 6, 3, 4, 0]
    true_id, true_leaf = [1, 2, 0, 1, 2, 3, 6], [0, 0, 1, 1, 1, 1, 1]
    false_id, false_leaf = [3, 4, 1, 4, 5, 0, 6], [0, 1, 1, 0, 1, 1, 1]
    missing = [0, 1, 0, 0, 1, 0, 0]
    members = {3: [1.5, 2.0]}
    leaf_target = [0, 1, 2, 0, 1, 2, 1]
    leaf_weight = [0.5, -1.0, 2.0, 1.5, 0.25, -0.75, 3.0]
    roots = [0, 5, 6]
    attrs = dict(tree_roots=roots, nodes_featureids=feature,
                 nodes_splits=numpy_helper.from_array(np.array(split, np.float32), "s"),
                 nodes_modes=numpy_helper.from_array(np.array(mode, np.uint8), "m"),
                 nodes_truenodeids=true_id, nodes_trueleafs=true_leaf,
                 nodes_falsenodeids=false_id, nodes_falseleafs=false_leaf,
                 nodes_missing_value_tracks_true=missing,
                 membership_values=numpy_helper.from_array(
                     np.array([1.5, 2.0, np.nan], np.float32), "v"),
                 leaf_targetids=leaf_target,
                 leaf_weights=numpy_helper.from_array(np.array(leaf_weight, np.float32), "w"),
                 n_targets=3)
    for name, aggregate in [("tree_ensemble_average", 0), ("tree_ensemble_sum", 1),
                            ("tree_ensemble_min", 2), ("tree_ensemble_max", 3)]:
        want = tree_ensemble(xt, roots, feature, split, mode, true_id, true_leaf, false_id,
                             false_leaf, missing, members, leaf_target, leaf_weight, 3, aggregate)
        cases.append(case(name, "TreeEnsemble", [("x", xt)], ["y"], [want], domain=ML,
                          aggregate_function=aggregate, **attrs))
    cases += regressor_cases() + classifier_cases() + linear_ml_cases()
    return cases


def linear_ml_cases():
    """ai.onnx.ml's preprocessing and linear models against numpy."""
    cases = []
    x = f32(6, 4)
    x[2, 1] = 0
    offset, scale = [0.5, -1.0, 0.0, 2.0], [2.0, 0.5, 1.5, -1.0]
    cases.append(case("scaler", "Scaler", [("x", x)], ["y"],
                      [((x.astype(np.float64) - offset) * scale).astype(np.float32)], domain=ML,
                      offset=offset, scale=scale))
    xi = rng.integers(-5, 6, (3, 4)).astype(np.int64)
    cases.append(case("scaler_int_one_value", "Scaler", [("x", xi)], ["y"],
                      [((xi - 1.5) * 0.25).astype(np.float32)], domain=ML, offset=[1.5],
                      scale=[0.25]))
    xz = x.copy()
    xz[3] = 0
    x64 = xz.astype(np.float64)
    for norm, d in [("MAX", x64.max(1, keepdims=True)),
                    ("L1", np.abs(x64).sum(1, keepdims=True)),
                    ("L2", np.sqrt((x64 * x64).sum(1, keepdims=True)))]:
        want = np.where(d == 0, x64, x64 / np.where(d == 0, 1, d)).astype(np.float32)
        cases.append(case(f"normalizer_{norm.lower()}", "Normalizer", [("x", xz)], ["y"], [want],
                          domain=ML, norm=norm))
    xn = x.copy()
    xn[0, 0] = xn[4, 2] = xn[5, 3] = np.nan
    fill = [9.0, 8.0, 7.0, 6.0]
    cases.append(case("imputer_nan", "Imputer", [("x", xn)], ["y"],
                      [np.where(np.isnan(xn), np.array(fill, np.float32), xn)], domain=ML,
                      imputed_value_floats=fill, replaced_value_float=float("nan")))
    cases.append(case("imputer_int", "Imputer", [("x", xi)], ["y"],
                      [np.where(xi == 3, -1, xi)], domain=ML, imputed_value_int64s=[-1],
                      replaced_value_int64=3))
    w, b = f32(3, 4), f32(3)
    lin = x.astype(np.float64) @ w.T.astype(np.float64) + b
    cases.append(case("linear_regressor", "LinearRegressor", [("x", x)], ["y"],
                      [lin[:, :2].astype(np.float32)], domain=ML,
                      coefficients=w[:2].ravel().tolist(), intercepts=b[:2].tolist(), targets=2))
    for post, scores in [("NONE", lin), ("SOFTMAX", softmax(lin)),
                         ("LOGISTIC", 1 / (1 + np.exp(-lin)))]:
        labels = [4, 8, 15]
        want_label = np.array(labels)[lin.argmax(1)].astype(np.int64)
        cases.append(case(f"linear_classifier_{post.lower()}", "LinearClassifier", [("x", x)],
                          ["label", "scores"], [want_label, scores.astype(np.float32)], domain=ML,
                          coefficients=w.ravel().tolist(), intercepts=b.tolist(),
                          classlabels_ints=labels, post_transform=post))
    return cases


def legacy_leaves(x, nodes):
    """Per sample, the (tree, node) of the leaf each tree reaches: nodes {(tree, id): (mode,
    feature, value, true id, false id, missing tracks true)}; a tree's root is its node no
    other node branches to; a NaN x goes where `missing tracks true` says."""
    tests = {"BRANCH_LEQ": lambda v, s: v <= s, "BRANCH_LT": lambda v, s: v < s,
             "BRANCH_GTE": lambda v, s: v >= s, "BRANCH_GT": lambda v, s: v > s,
             "BRANCH_EQ": lambda v, s: v == s, "BRANCH_NEQ": lambda v, s: v != s}
    children = {(t, c) for (t, _), n in nodes.items() if n[0] != "LEAF" for c in n[3:5]}
    roots = [k for k in nodes if k not in children]
    out = []
    for n in range(x.shape[0]):
        reached = []
        for tree, node in roots:
            while nodes[(tree, node)][0] != "LEAF":
                mode, feature, value, t_id, f_id, missing = nodes[(tree, node)]
                v = float(x[n, feature])
                cond = bool(missing) if math.isnan(v) else tests[mode](v, value)
                node = t_id if cond else f_id
            reached.append((tree, node))
        out.append(reached)
    return out


def tree_regressor(x, nodes, targets, n_targets, aggregate, base, post):
    """ai.onnx.ml TreeEnsembleRegressor: targets [(tree, id, target, weight)] over the leaves
    legacy_leaves finds; unreached targets 0 (onnxruntime's), then base and post_transform."""
    combine = {"SUM": lambda a, w: a + w, "AVERAGE": lambda a, w: a + w, "MIN": min,
               "MAX": max}[aggregate]
    start = {"SUM": 0.0, "AVERAGE": 0.0, "MIN": np.inf, "MAX": -np.inf}[aggregate]
    y = np.full((x.shape[0], n_targets), start)
    walks = legacy_leaves(x, nodes)
    for n, reached in enumerate(walks):
        for leaf in reached:
            for t, i, target, w in targets:
                if (t, i) == leaf:
                    y[n, target] = combine(y[n, target], w)
    if aggregate == "AVERAGE":
        y /= len(walks[0])
    y[np.isinf(y)] = 0
    y += base
    if post == "LOGISTIC":
        y = 1 / (1 + np.exp(-y))
    elif post == "SOFTMAX":
        y = softmax(y)
    return y.astype(np.float32)


def regressor_cases():
    cases = []
    x = f32(7, 3)
    x[1, 0] = np.nan
    x[2, 2] = np.nan
    x[3, 2] = 0.0
    nodes = {(0, 0): ("BRANCH_LEQ", 0, 0.1, 1, 2, 0), (0, 1): ("BRANCH_GT", 1, -0.2, 3, 4, 0),
             (0, 2): ("LEAF", 0, 0.0, 0, 0, 0), (0, 3): ("LEAF", 0, 0.0, 0, 0, 0),
             (0, 4): ("LEAF", 0, 0.0, 0, 0, 0), (1, 0): ("LEAF", 0, 0.0, 0, 0, 0),
             (7, 5): ("BRANCH_EQ", 2, 0.0, 6, 8, 1), (7, 6): ("LEAF", 0, 0.0, 0, 0, 0),
             (7, 8): ("LEAF", 0, 0.0, 0, 0, 0)}
    targets = [(0, 2, 0, 1.0), (0, 2, 1, -2.0), (0, 3, 0, 0.5), (0, 4, 1, 0.25),
               (1, 0, 0, 0.1), (1, 0, 1, 0.2), (7, 6, 1, 3.0), (7, 8, 0, -1.5)]
    base = [0.3, -0.1]
    keys = list(nodes)
    attrs = dict(
        nodes_treeids=[k[0] for k in keys], nodes_nodeids=[k[1] for k in keys],
        nodes_modes=[nodes[k][0] for k in keys], nodes_featureids=[nodes[k][1] for k in keys],
        nodes_values=[nodes[k][2] for k in keys], nodes_truenodeids=[nodes[k][3] for k in keys],
        nodes_falsenodeids=[nodes[k][4] for k in keys],
        nodes_missing_value_tracks_true=[nodes[k][5] for k in keys],
        target_treeids=[t[0] for t in targets], target_nodeids=[t[1] for t in targets],
        target_ids=[t[2] for t in targets], target_weights=[t[3] for t in targets],
        n_targets=2, base_values=base)
    for aggregate, post in [("SUM", "NONE"), ("AVERAGE", "LOGISTIC"), ("MIN", "NONE"),
                            ("MAX", "SOFTMAX")]:
        want = tree_regressor(x, nodes, targets, 2, aggregate, np.array(base), post)
        cases.append(case(f"tree_regressor_{aggregate.lower()}_{post.lower()}",
                          "TreeEnsembleRegressor", [("x", x)], ["y"], [want], domain=ML,
                          opset=3, aggregate_function=aggregate, post_transform=post, **attrs))
    return cases


def legacy_sums(x, nodes, entries, n_targets):
    """Per sample and class: the sum of the reached leaves' entries, and whether any tree
    reached a leaf holding the class."""
    sums = np.zeros((x.shape[0], n_targets))
    held = np.zeros((x.shape[0], n_targets), bool)
    for n, reached in enumerate(legacy_leaves(x, nodes)):
        for t, i, target, w in entries:
            if (t, i) in reached:
                sums[n, target] += w * reached.count((t, i))
                held[n, target] = True
    return sums, held


def tree_classifier(x, nodes, entries, labels, base, post):
    """TreeEnsembleClassifier as onnxruntime writes labels and scores (contrib op's comment
    in ml_ops.cc): returns labels, scores."""
    c = len(labels)
    sums, held = legacy_sums(x, nodes, entries, c)
    logistic = lambda v: 1 / (1 + np.exp(-v))
    if c > 2:
        has_base = np.arange(c) < len(base)
        bv = np.zeros(c)
        bv[:len(base)] = base
        scored = held | has_base
        value = np.where(held, sums, 0) + bv
        scores = np.where(scored, value, 0)
        label = np.array(labels)[np.argmax(np.where(scored, value, -np.inf), axis=1)]
        if post == "SOFTMAX":
            scores = softmax(scores)
        elif post == "LOGISTIC":
            scores = logistic(scores)
        return label.astype(np.int64), scores.astype(np.float32)
    k = entries[0][2]
    positive = all(e[3] >= 0 for e in entries)
    pos = np.where(held[:, k], sums[:, k] + (base[0] if k == 0 and base else 0), 0)
    label = np.where(pos > (0.5 if positive else 0), labels[1], labels[0]).astype(np.int64)
    if post == "LOGISTIC":
        one = logistic(np.stack([-pos, pos], 1))
    elif positive:
        one = np.stack([1 - pos, pos], 1)
    else:
        one = np.stack([-pos, pos], 1)
    if k == 1:
        two = np.stack([np.zeros_like(pos), pos], 1)
        two = softmax(two) if post == "SOFTMAX" else logistic(two) if post == "LOGISTIC" else two
        one = np.where(held[:, 1:2], two, one)
    return label, one.astype(np.float32)


def classifier_cases():
    cases = []
    x = f32(9, 3)
    x[1, 0] = np.nan
    nodes = {(0, 0): ("BRANCH_LEQ", 0, 0.1, 1, 2, 0), (0, 1): ("BRANCH_GT", 1, -0.2, 3, 4, 0),
             (0, 2): ("LEAF", 0, 0.0, 0, 0, 0), (0, 3): ("LEAF", 0, 0.0, 0, 0, 0),
             (0, 4): ("LEAF", 0, 0.0, 0, 0, 0), (3, 0): ("BRANCH_LT", 2, 0.2, 1, 2, 1),
             (3, 1): ("LEAF", 0, 0.0, 0, 0, 0), (3, 2): ("LEAF", 0, 0.0, 0, 0, 0)}
    keys = list(nodes)
    tree_attrs = dict(
        nodes_treeids=[k[0] for k in keys], nodes_nodeids=[k[1] for k in keys],
        nodes_modes=[nodes[k][0] for k in keys], nodes_featureids=[nodes[k][1] for k in keys],
        nodes_values=[nodes[k][2] for k in keys], nodes_truenodeids=[nodes[k][3] for k in keys],
        nodes_falsenodeids=[nodes[k][4] for k in keys],
        nodes_missing_value_tracks_true=[nodes[k][5] for k in keys])
    three = [(0, 2, 0, 0.6), (0, 2, 1, 0.4), (0, 3, 1, 0.9), (0, 4, 0, 0.2),
             (3, 1, 0, 0.3), (3, 1, 1, 0.3), (3, 2, 1, 0.5)]  # class 2 never reached
    binary_pos = [(0, 2, 1, 0.7), (0, 3, 1, 0.2), (0, 4, 1, 0.4), (3, 1, 1, 0.1), (3, 2, 1, 0.6)]
    binary_neg = [(t, i, 1, w - 0.45) for t, i, _, w in binary_pos]
    variants = [
        ("multiclass_none_base", three, [5, 7, 9], [0.1, -0.2, 0.0], "NONE"),
        ("multiclass_softmax", three, [5, 7, 9], [], "SOFTMAX"),
        ("multiclass_logistic", three, [5, 7, 9], [0.0, 0.0, 0.3], "LOGISTIC"),
        ("binary_class1_positive", binary_pos, [0, 1], [], "NONE"),
        ("binary_class0_positive", [(t, i, 0, w) for t, i, _, w in binary_pos], [3, 4], [],
         "NONE"),
        ("binary_class0_positive_logistic", [(t, i, 0, w) for t, i, _, w in binary_pos], [3, 4],
         [], "LOGISTIC"),
        ("binary_class1_negative_logistic", binary_neg, [0, 1], [], "LOGISTIC"),
        ("binary_class0_negative_base", [(t, i, 0, w) for t, i, _, w in binary_neg], [0, 1],
         [0.25], "LOGISTIC"),
    ]
    for name, entries, labels, base, post in variants:
        label, scores = tree_classifier(x, nodes, entries, labels, base, post)
        attrs = dict(tree_attrs, class_treeids=[e[0] for e in entries],
                     class_nodeids=[e[1] for e in entries], class_ids=[e[2] for e in entries],
                     class_weights=[e[3] for e in entries], classlabels_int64s=labels,
                     post_transform=post)
        if base:
            attrs["base_values"] = base
        cases.append(case(f"tree_classifier_{name}", "TreeEnsembleClassifier", [("x", x)],
                          ["label", "scores"], [label, scores], domain=ML, opset=3, **attrs))
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
    cases += gqa_cases() + ml_cases()
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
    print(f"contrib_check: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
