// The ai.onnx.ml support vector machines (scikit-learn's SVR and SVC exports):
//   SVMRegressor   y = sum_i coefficients[i] K(x, v_i) + rho; with one_class, 1 where y > 0,
//                  else -1. float32 [N, 1].
//   SVMClassifier  one-vs-one: for classes i < j (in that order, pair p) the decision
//                  d_p = sum over i's vectors of coefficients[j-1][m] K(x, v_m) + sum over j's
//                  of coefficients[i][m] K(x, v_m) + rho[p]; d_p > 0 votes i, else j; the
//                  label is the first class with the most votes. Scores: the decisions (two
//                  classes: [-d, d] as onnxruntime writes them, label i where d > 0), then
//                  post_transform (two classes: NONE or LOGISTIC). Without support vectors (a
//                  linear SVM) the scores are x . coefficients[c] + rho[0] and the label their
//                  first best (onnxruntime's two-class thresholds). Probability estimates (prob_a,
//                  prob_b: onnxruntime couples them iteratively) are not supported.
// K: LINEAR x.v, POLY (gamma x.v + coef0)^degree, RBF exp(-gamma |x - v|^2), SIGMOID
// tanh(gamma x.v + coef0). Computed in float64.
#include <algorithm>
#include <cmath>

#include "compiler/lower/ml_common.h"

namespace ferrite {
namespace {

using ml::cast_to;
using ml::float_values;
using ml::post_transformed;
using ml::samples;
using ml::table;

constexpr const char* kMl = "ai.onnx.ml.";

V as_f64(KernelBuilder& b, V v) {
  return v.type == ScalarType::F64 ? v : b.cast(v, ScalarType::F64);
}

// K(x_n, v_m) for every sample n and support vector m: [N, count], float64, realized.
TensorBoxPtr kernel_values(LowerCtx& c, const TensorBoxPtr& x, const std::vector<double>& sv,
                           int64_t count) {
  const int64_t f = x->size[1];
  if (count <= 0 || sv.size() != static_cast<size_t>(count * f))
    c.error("support_vectors has ", sv.size(), " values, expected ", count, " x ", f);
  const std::string kernel = c.node.attr_string("kernel_type", "LINEAR");
  if (kernel != "LINEAR" && kernel != "POLY" && kernel != "RBF" && kernel != "SIGMOID")
    c.error("kernel_type '", kernel, "'");
  const std::vector<double> params = float_values(c, "kernel_params");
  const double gamma = params.size() > 0 ? params[0] : 0.0,
               coef0 = params.size() > 1 ? params[1] : 0.0,
               degree = params.size() > 2 ? params[2] : 0.0;
  const TensorBoxPtr v = table(c.gl, sv, true, c.origin() + " support vectors");
  auto dots = std::make_shared<ComputedDef>();  // x.v, or |x - v|^2 for RBF
  dots->is_reduction = true;
  dots->ranges = {x->size[0], count};
  dots->reduction_ranges = {f};
  dots->reduce = ReduceKind::Sum;
  const bool rbf = kernel == "RBF";
  dots->rfn = [x, v, f, rbf](KernelBuilder& b, const std::vector<Index>& o,
                             const std::vector<Index>& r) {
    const V a = as_f64(b, x->load(b, {o[0], r[0]})),
            w = v->load(b, {ix_add(ix_mul(o[1], f), r[0])});
    if (!rbf) return b.binary(Op::Mul, a, w);
    const V d = b.binary(Op::Sub, a, w);
    return b.binary(Op::Mul, d, d);
  };
  dots->origin = c.origin();
  const TensorBoxPtr dot = make_reduction_box(DType::F64, dots);
  c.gl.realize(dot);
  const TensorBoxPtr k =
      make_pointwise(c, {dot}, DType::F64, [=](KernelBuilder& b, const std::vector<V>& in) {
        auto num = [&](double z) { return b.constant(ScalarType::F64, z); };
        const V d = in[0];
        if (kernel == "POLY")
          return b.binary(Op::Pow, b.binary(Op::Add, b.binary(Op::Mul, num(gamma), d), num(coef0)),
                          num(degree));
        if (kernel == "RBF") return b.unary(Op::Exp, b.binary(Op::Mul, num(-gamma), d));
        if (kernel == "SIGMOID")
          return b.unary(Op::Tanh, b.binary(Op::Add, b.binary(Op::Mul, num(gamma), d), num(coef0)));
        return d;
      });
  c.gl.realize(k);
  return k;
}

// y[n, r] = sum_m k[n, m] w[r * m_count + m] + bias[r]: [N, rows], float64, realized.
TensorBoxPtr weighted(LowerCtx& c, const TensorBoxPtr& k, const std::vector<double>& w,
                      const std::vector<double>& bias, int64_t rows) {
  const int64_t m = k->size[1];
  const TensorBoxPtr wt = table(c.gl, w, true, c.origin() + " coefficients"),
                     bt = table(c.gl, bias, true, c.origin() + " rho");
  auto def = std::make_shared<ComputedDef>();
  def->is_reduction = true;
  def->ranges = {k->size[0], rows};
  def->reduction_ranges = {m};
  def->reduce = ReduceKind::Sum;
  def->rfn = [k, wt, m](KernelBuilder& b, const std::vector<Index>& o,
                        const std::vector<Index>& r) {
    return b.binary(Op::Mul, k->load(b, {o[0], r[0]}),
                    wt->load(b, {ix_add(ix_mul(o[1], m), r[0])}));
  };
  def->post = nullptr;
  def->origin = c.origin();
  const TensorBoxPtr s = make_reduction_box(DType::F64, def);
  c.gl.realize(s);
  const TensorBoxPtr y = make_pointwise_box(
      DType::F64, {k->size[0], rows},
      [s, bt](KernelBuilder& b, const std::vector<Index>& i) {
        return b.binary(Op::Add, s->load(b, i), bt->load(b, {i[1]}));
      },
      c.origin());
  c.gl.realize(y);
  return y;
}

std::vector<TensorBoxPtr> lower_svm_regressor(LowerCtx& c) {
  const TensorBoxPtr& x = samples(c);
  const std::vector<double> coef = float_values(c, "coefficients"), rho = float_values(c, "rho");
  const int64_t n = static_cast<int64_t>(coef.size());
  if (c.node.attr_int("n_supports", n) != n) c.error("n_supports is not the coefficients' count");
  if (rho.size() != 1) c.error("rho must be one value");
  if (c.node.attr_string("post_transform", "NONE") != "NONE") c.unsupported("post_transform");
  const TensorBoxPtr y =
      weighted(c, kernel_values(c, x, float_values(c, "support_vectors"), n), coef, rho, 1);
  const bool one_class = c.node.attr_int("one_class", 0) != 0;
  return {
      make_pointwise(c, {y}, DType::F32, [one_class](KernelBuilder& b, const std::vector<V>& in) {
        V r = in[0];
        if (one_class)
          r = b.where(b.binary(Op::Gt, r, b.constant(ScalarType::F64, 0)),
                      b.constant(ScalarType::F64, 1), b.constant(ScalarType::F64, -1));
        return b.cast(r, ScalarType::F32);
      })};
}

std::vector<TensorBoxPtr> lower_svm_classifier(LowerCtx& c) {
  const TensorBoxPtr& x = samples(c);
  if (c.node.has_attr("classlabels_strings")) c.unsupported("string class labels");
  if (!float_values(c, "prob_a").empty())
    c.unsupported("probability estimates (prob_a, prob_b: onnxruntime couples them iteratively)");
  const std::vector<int64_t> labels = c.node.attr_ints("classlabels_ints");
  const int64_t k = static_cast<int64_t>(labels.size());
  if (k < 2) c.error(k, " class labels (at least two)");
  const TensorBoxPtr label_t = table(c.gl, ml::doubles(labels), false, c.origin() + " labels");
  const std::vector<double> coef = float_values(c, "coefficients"), rho = float_values(c, "rho");
  const std::vector<int64_t> per_class = c.node.attr_ints("vectors_per_class");
  const std::string post = c.node.attr_string("post_transform", "NONE");
  int64_t count = 0;
  for (int64_t n : per_class) {
    if (n < 0) c.error("vectors_per_class holds ", n);
    count += n;
  }
  if (count == 0) {  // a linear SVM: one row of coefficients per class, one rho for all
    const int64_t f = x->size[1];
    if (coef.size() != static_cast<size_t>(k * f) || rho.empty())
      c.error("coefficients must be ", k, " x ", f, " with rho");
    const TensorBoxPtr linear_k =
        make_pointwise(c, {x}, DType::F64,
                       [](KernelBuilder& b, const std::vector<V>& v) { return as_f64(b, v[0]); });
    const TensorBoxPtr s = weighted(c, linear_k, coef, std::vector<double>(k, rho[0]), k);
    if (k == 2) c.unsupported("a two-class linear SVM (onnxruntime labels it by thresholds)");
    return {ml::first_best_label(c, s, label_t),
            cast_to(c, post_transformed(c, s, post), DType::F32)};
  }
  if (static_cast<int64_t>(per_class.size()) != k)
    c.error("vectors_per_class needs ", k, " entries");
  const int64_t pairs = k * (k - 1) / 2;
  if (coef.size() != static_cast<size_t>((k - 1) * count) ||
      rho.size() != static_cast<size_t>(pairs))
    c.error("coefficients must be ", k - 1, " x ", count, " and rho ", pairs, " values");
  // The pairs' coefficients over every support vector (0 outside the pair's two classes).
  std::vector<int64_t> start(static_cast<size_t>(k), 0);
  for (int64_t i = 1; i < k; ++i) start[i] = start[i - 1] + per_class[i - 1];
  std::vector<double> w(static_cast<size_t>(pairs * count), 0.0);
  int64_t p = 0;
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = i + 1; j < k; ++j, ++p) {
      for (int64_t m = start[i]; m < start[i] + per_class[i]; ++m)
        w[p * count + m] = coef[(j - 1) * count + m];
      for (int64_t m = start[j]; m < start[j] + per_class[j]; ++m)
        w[p * count + m] = coef[i * count + m];
    }
  const TensorBoxPtr d =
      weighted(c, kernel_values(c, x, float_values(c, "support_vectors"), count), w, rho, pairs);
  if (k == 2) {
    const TensorBoxPtr label =
        make_pointwise(c, {reshape_view(d, {x->size[0]})}, DType::I64,
                       [l0 = labels[0], l1 = labels[1]](KernelBuilder& b, const std::vector<V>& v) {
                         return b.where(b.binary(Op::Gt, v[0], b.constant(ScalarType::F64, 0)),
                                        b.constant_i64(l0), b.constant_i64(l1));
                       });
    if (post != "NONE" && post != "LOGISTIC")
      c.unsupported("post_transform ", post, " for two classes");
    const TensorBoxPtr z = make_pointwise_box(
        DType::F64, {x->size[0], 2},
        [d](KernelBuilder& b, const std::vector<Index>& i) {
          const V v = d->load(b, {i[0], ix_const(0)});
          return b.where(b.binary(Op::Eq, b.index_value(i[1]), b.constant_i64(1)), v,
                         b.unary(Op::Neg, v));
        },
        c.origin());
    return {label, cast_to(c, post_transformed(c, z, post), DType::F32)};
  }
  // Votes per class: pair (i, j) votes i where d > 0, else j.
  std::vector<std::pair<int64_t, int64_t>> pair_of;
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = i + 1; j < k; ++j) pair_of.push_back({i, j});
  const TensorBoxPtr votes = make_pointwise_box(
      DType::F64, {x->size[0], k},
      [d, pair_of](KernelBuilder& b, const std::vector<Index>& i) {
        const V cls = b.index_value(i[1]);
        V sum = b.constant(ScalarType::F64, 0);
        for (size_t q = 0; q < pair_of.size(); ++q) {
          const V pos = b.binary(Op::Gt, d->load(b, {i[0], ix_const(static_cast<int64_t>(q))}),
                                 b.constant(ScalarType::F64, 0));
          const V is_i = b.binary(Op::Eq, cls, b.constant_i64(pair_of[q].first));
          const V is_j = b.binary(Op::Eq, cls, b.constant_i64(pair_of[q].second));
          const V vote = b.binary(Op::Or, b.binary(Op::And, is_i, pos),
                                  b.binary(Op::And, is_j, b.unary(Op::Not, pos)));
          sum = b.binary(
              Op::Add, sum,
              b.where(vote, b.constant(ScalarType::F64, 1), b.constant(ScalarType::F64, 0)));
        }
        return sum;
      },
      c.origin());
  c.gl.realize(votes);
  return {ml::first_best_label(c, votes, label_t),
          cast_to(c, post_transformed(c, d, post), DType::F32)};
}

}  // namespace

void register_ml_svm_ops(LoweringTable& t) {
  t.add(str_cat(kMl, "SVMRegressor"), lower_svm_regressor);
  t.add(str_cat(kMl, "SVMClassifier"), lower_svm_classifier);
}

}  // namespace ferrite
