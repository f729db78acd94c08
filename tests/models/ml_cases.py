"""The ai.onnx.ml cases of contrib_check.py (scikit-learn's exported ops: trees, scalers,
encoders, linear models), each against a numpy formula or walker; every one was also checked
against onnxruntime 1.30 when written (labels equal, scores within 1.2e-7), except where it
and the spec disagree (TreeEnsemble's post_transform numbering: refused)."""
import math

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from op_check import ML, case, check_error

rng = np.random.default_rng(29)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


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
    a, b, d = rng.integers(-5, 5, (3, 2)).astype(np.float32), f32(3, 4), f32(3, 1)
    want = np.concatenate([a.astype(np.float32), b[:, :3], d, np.zeros((3, 1), np.float32)], 1)
    cases.append(case("feature_vectorizer", "FeatureVectorizer", [("a", a), ("b", b), ("d", d)],
                      ["y"], [want], domain=ML, inputdimensions=[2, 3, 2]))
    xs, sv, coef = f32(5, 3), f32(4, 3), f32(4)
    dot = xs.astype(np.float64) @ sv.T.astype(np.float64)
    dist = ((xs[:, None, :].astype(np.float64) - sv[None]) ** 2).sum(-1)
    gamma, coef0, degree, rho = 0.3, 0.5, 3.0, -0.2
    for kernel, k in [("LINEAR", dot), ("POLY", (gamma * dot + coef0) ** degree),
                      ("RBF", np.exp(-gamma * dist)), ("SIGMOID", np.tanh(gamma * dot + coef0))]:
        y = (k @ coef.astype(np.float64) + rho).reshape(-1, 1)
        cases.append(case(f"svm_regressor_{kernel.lower()}", "SVMRegressor", [("x", xs)], ["y"],
                          [y.astype(np.float32)], domain=ML, kernel_type=kernel,
                          kernel_params=[gamma, coef0, degree],
                          support_vectors=sv.ravel().tolist(), coefficients=coef.tolist(),
                          n_supports=4, rho=[rho]))
    cases += svm_classifier_cases()
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
    # One row of coefficients for two labels: onnxruntime's binary form.
    s1 = x.astype(np.float64) @ w[0].astype(np.float64) + b[0]
    for post in ["NONE", "LOGISTIC", "SOFTMAX"]:
        p = 1 / (1 + np.exp(-s1)) if post == "LOGISTIC" else s1
        cases.append(case(f"linear_classifier_binary_{post.lower()}", "LinearClassifier",
                          [("x", x)], ["label", "scores"],
                          [np.where(s1 > 0, 9, 4).astype(np.int64),
                           np.stack([1 - p, p], 1).astype(np.float32)], domain=ML,
                          coefficients=w[0].tolist(), intercepts=[float(b[0])],
                          classlabels_ints=[4, 9], post_transform=post))
    cats = [3, 7, -1, 12]
    xc = np.array([[3, 5], [12, -1], [7, 7]], dtype=np.int64)
    onehot = (xc[..., None] == np.array(cats)).astype(np.float32)
    cases.append(case("one_hot_encoder", "OneHotEncoder", [("x", xc)], ["y"], [onehot],
                      domain=ML, cats_int64s=cats))
    xk = np.array([[3, 12], [-1, 7]], dtype=np.int64)
    cases.append(case("one_hot_encoder_zeros0", "OneHotEncoder", [("x", xk)], ["y"],
                      [(xk[..., None] == np.array(cats)).astype(np.float32)], domain=ML,
                      cats_int64s=cats, zeros=0))
    keys, vals = [5, -3, 40, 11, 2], [50, 30, 400, 110, 20]
    xl = np.array([[5, 6, 2], [40, -3, 0], [11, 11, 99]], dtype=np.int64)
    lut = dict(zip(keys, vals))
    cases.append(case("label_encoder_int_int", "LabelEncoder", [("x", xl)], ["y"],
                      [np.vectorize(lambda v: lut.get(v, 7))(xl).astype(np.int64)], domain=ML,
                      opset=2, keys_int64s=keys, values_int64s=vals, default_int64=7))
    fkeys, fvals = [0.5, -2.0, 3.25, float("nan")], [1.5, 2.5, 3.5, 9.0]
    xf = np.array([0.5, 3.25, 1.0, np.nan, -2.0], dtype=np.float32)
    wantf = np.array([1.5, 3.5, -1.0, -1.0, 2.5], dtype=np.float32)  # a NaN key equals nothing
    cases.append(case("label_encoder_float_float_nan", "LabelEncoder", [("x", xf)], ["y"],
                      [wantf], domain=ML, opset=2, keys_floats=fkeys, values_floats=fvals,
                      default_float=-1.0))
    cases.append(case("label_encoder_float_int", "LabelEncoder", [("x", xf)], ["y"],
                      [np.array([10, 30, -1, -1, 20], dtype=np.int64)], domain=ML, opset=2,
                      keys_floats=fkeys[:3], values_int64s=[10, 20, 30]))
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


def check_unknown_category(a, backend):
    """OneHotEncoder with zeros = 0 and a value of no category: the run fails naming it."""
    x = np.array([3, 4], dtype=np.int64)
    node = helper.make_node("OneHotEncoder", ["x"], ["y"], domain=ML, cats_int64s=[3, 7],
                            zeros=0)
    graph = helper.make_graph([node], "bad", [helper.make_tensor_value_info("x", TensorProto.INT64,
                                                                            [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid(ML, 3)])
    model.ir_version = 8
    return check_error(a.cli, a.work, "one_hot_unknown", model, [("x", x)], backend,
                       ["OneHotEncoder", "no category"])


def svm_classifier_cases():
    """SVMClassifier one-vs-one (votes, decision values) and linear, as onnxruntime writes
    them (ml_svm_ops.cc's comment)."""
    cases = []
    x = f32(6, 3)
    gamma, coef0, degree = 0.4, 0.3, 2.0

    def kern(kind, sv):
        dot = x.astype(np.float64) @ sv.T.astype(np.float64)
        if kind == "POLY":
            return (gamma * dot + coef0) ** degree
        if kind == "RBF":
            return np.exp(-gamma * ((x[:, None, :].astype(np.float64) - sv[None]) ** 2).sum(-1))
        return dot

    for name, kind, per_class, post in [("three_rbf", "RBF", [2, 1, 2], "NONE"),
                                        ("three_linear_softmax", "LINEAR", [1, 2, 1], "SOFTMAX"),
                                        ("two_poly", "POLY", [2, 2], "NONE"),
                                        ("two_poly_logistic", "POLY", [2, 2], "LOGISTIC")]:
        k, count = len(per_class), sum(per_class)
        sv, coef = f32(count, 3), f32(k - 1, count)
        pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
        rho = f32(len(pairs))
        kv = kern(kind, sv)
        start = np.concatenate([[0], np.cumsum(per_class)])
        d = np.zeros((6, len(pairs)))
        for p, (i, j) in enumerate(pairs):
            for m in range(start[i], start[i + 1]):
                d[:, p] += coef[j - 1, m] * kv[:, m]
            for m in range(start[j], start[j + 1]):
                d[:, p] += coef[i, m] * kv[:, m]
            d[:, p] += rho[p]
        labels = [3, 6, 9][:k]
        if k == 2:
            label = np.where(d[:, 0] > 0, labels[0], labels[1])
            z = np.stack([-d[:, 0], d[:, 0]], 1)
            z = 1 / (1 + np.exp(-z)) if post == "LOGISTIC" else z
        else:
            votes = np.zeros((6, k))
            for p, (i, j) in enumerate(pairs):
                votes[:, i] += d[:, p] > 0
                votes[:, j] += d[:, p] <= 0
            label = np.array(labels)[votes.argmax(1)]
            z = softmax(d) if post == "SOFTMAX" else d
        cases.append(case(f"svm_classifier_{name}", "SVMClassifier", [("x", x)],
                          ["label", "scores"], [label.astype(np.int64), z.astype(np.float32)],
                          domain=ML, kernel_type=kind, kernel_params=[gamma, coef0, degree],
                          support_vectors=sv.ravel().tolist(), coefficients=coef.ravel().tolist(),
                          rho=rho.tolist(), vectors_per_class=per_class, classlabels_ints=labels,
                          post_transform=post))
    w = f32(3, 3)
    s = x.astype(np.float64) @ w.T.astype(np.float64) + 0.25
    cases.append(case("svm_classifier_linear_svm", "SVMClassifier", [("x", x)],
                      ["label", "scores"], [np.array([2, 4, 8])[s.argmax(1)].astype(np.int64),
                                            s.astype(np.float32)], domain=ML,
                      coefficients=w.ravel().tolist(), rho=[0.25], classlabels_ints=[2, 4, 8],
                      kernel_type="LINEAR", kernel_params=[0.0, 0.0, 0.0]))
    return cases

