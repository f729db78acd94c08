// The ai.onnx.ml ops of scikit-learn's preprocessing and linear models, on numbers:
//   Scaler            y = (x - offset) * scale (one value or one per feature), float32
//   Normalizer        each row over its max, L1 or L2 norm (unchanged where that is 0)
//   Imputer           x where it is not replaced_value (NaN: where x is NaN), else the
//                     imputed value (one or one per feature)
//   LinearRegressor   x · coefficientsᵀ + intercepts, then post_transform, float32
//   LinearClassifier  scores = x · coefficientsᵀ + intercepts, the label of the first best
//                     score (int64 labels), the scores through post_transform; one row of
//                     coefficients (onnxruntime's binary form, labelled by a rule of its own)
//                     is not supported.
// Computed in float64, as onnxruntime's CPU kernels compute them in float and double alike to
// within rounding.
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

// Attribute `key` as one value or one per feature, as a float64 table of `features` entries.
TensorBoxPtr per_feature(const LowerCtx& c, const std::string& key, int64_t features,
                         std::vector<double> values, double dflt) {
  if (values.empty()) values.assign(1, dflt);
  if (values.size() == 1) values.assign(static_cast<size_t>(features), values[0]);
  if (values.size() != static_cast<size_t>(features))
    c.error(key, " has ", values.size(), " values for ", features, " features");
  return table(c.gl, values, true, c.origin() + " " + key);
}

V as_f64(KernelBuilder& b, V v) {
  return v.type == ScalarType::F64 ? v : b.cast(v, ScalarType::F64);
}

std::vector<TensorBoxPtr> lower_scaler(LowerCtx& c) {
  const TensorBoxPtr& x = samples(c);
  const int64_t f = x->size[1];
  const TensorBoxPtr offset = per_feature(c, "offset", f, float_values(c, "offset"), 0.0),
                     scale = per_feature(c, "scale", f, float_values(c, "scale"), 1.0);
  const TensorBoxPtr y = make_pointwise_box(
      DType::F32, x->size,
      [x, offset, scale](KernelBuilder& b, const std::vector<Index>& i) {
        const V d = b.binary(Op::Sub, as_f64(b, x->load(b, i)), offset->load(b, {i[1]}));
        return b.cast(b.binary(Op::Mul, d, scale->load(b, {i[1]})), ScalarType::F32);
      },
      c.origin());
  return {y};
}

std::vector<TensorBoxPtr> lower_normalizer(LowerCtx& c) {
  const TensorBoxPtr& x = samples(c);
  const std::string norm = c.node.attr_string("norm", "MAX");
  if (norm != "MAX" && norm != "L1" && norm != "L2") c.error("norm '", norm, "' (MAX, L1, L2)");
  const TensorBoxPtr x64 =
      make_pointwise(c, {x}, DType::F64, [norm](KernelBuilder& b, const std::vector<V>& v) {
        const V d = as_f64(b, v[0]);
        return norm == "L1" ? b.unary(Op::Abs, d) : norm == "L2" ? b.binary(Op::Mul, d, d) : d;
      });
  TensorBoxPtr n = make_reduction(c, x64, {1}, true,
                                  norm == "MAX" ? ReduceKind::Max : ReduceKind::Sum, DType::F64);
  const TensorBoxPtr y =
      make_pointwise(c, {x, n}, DType::F32, [norm](KernelBuilder& b, const std::vector<V>& v) {
        V d = norm == "L2" ? b.unary(Op::Sqrt, v[1]) : v[1];
        const V x = as_f64(b, v[0]);
        const V zero = b.binary(Op::Eq, d, b.constant(ScalarType::F64, 0));
        return b.cast(b.where(zero, x, b.binary(Op::Div, x, d)), ScalarType::F32);
      });
  return {y};
}

std::vector<TensorBoxPtr> lower_imputer(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  if (x->size.empty()) c.error("X must have rank >= 1");
  const bool ints = !dtype_is_float(x->dtype);
  const int64_t f = x->size.back();
  std::vector<double> imputed = ints ? ml::doubles(c.node.attr_ints("imputed_value_int64s"))
                                     : float_values(c, "imputed_value_floats");
  if (imputed.empty()) c.error("imputed_value_", ints ? "int64s" : "floats", " is required");
  const TensorBoxPtr fill = per_feature(c, "imputed value", f, imputed, 0.0);
  const double replaced = ints ? static_cast<double>(c.node.attr_int("replaced_value_int64", 0))
                               : c.node.attr_float("replaced_value_float", 0.0);
  const ScalarType st = compute_type(x->dtype);
  Loader fn = [x, fill, replaced, st](KernelBuilder& b, const std::vector<Index>& i) {
    const V v = x->load(b, i);
    const V hit = std::isnan(replaced) ? b.unary(Op::IsNaN, v)
                                       : b.binary(Op::Eq, v, b.constant(st, replaced));
    return b.where(hit, b.cast(fill->load(b, {i.back()}), st), v);
  };
  return {make_pointwise_box(x->dtype, x->size, fn, c.origin())};
}

// x · coefficientsᵀ + intercepts: [samples, rows] float64 (coefficients rows × features).
TensorBoxPtr linear(LowerCtx& c, const TensorBoxPtr& x, int64_t rows) {
  const int64_t f = x->size[1];
  const std::vector<double> coef = float_values(c, "coefficients");
  std::vector<double> intercepts = float_values(c, "intercepts");
  if (rows <= 0 || coef.size() != static_cast<size_t>(rows * f))
    c.error("coefficients has ", coef.size(), " values, expected ", rows, " x ", f);
  if (intercepts.empty()) intercepts.assign(static_cast<size_t>(rows), 0.0);
  if (intercepts.size() != static_cast<size_t>(rows))
    c.error("intercepts has ", intercepts.size(), " values for ", rows, " rows");
  const TensorBoxPtr w = table(c.gl, coef, true, c.origin() + " coefficients"),
                     b0 = table(c.gl, intercepts, true, c.origin() + " intercepts");
  auto def = std::make_shared<ComputedDef>();
  def->is_reduction = true;
  def->ranges = {x->size[0], rows};
  def->reduction_ranges = {f};
  def->reduce = ReduceKind::Sum;
  def->rfn = [x, w, f](KernelBuilder& b, const std::vector<Index>& o, const std::vector<Index>& r) {
    return b.binary(Op::Mul, as_f64(b, x->load(b, {o[0], r[0]})),
                    w->load(b, {ix_add(ix_mul(o[1], f), r[0])}));
  };
  def->origin = c.origin();
  TensorBoxPtr dot = make_reduction_box(DType::F64, def);
  c.gl.realize(dot);
  return make_pointwise(c, {dot, b0}, DType::F64, [](KernelBuilder& b, const std::vector<V>& v) {
    return b.binary(Op::Add, v[0], v[1]);
  });
}

std::vector<TensorBoxPtr> lower_linear_regressor(LowerCtx& c) {
  const TensorBoxPtr& x = samples(c);
  const int64_t targets = c.node.attr_int("targets", 1);
  const TensorBoxPtr y = linear(c, x, targets);
  return {
      cast_to(c, post_transformed(c, y, c.node.attr_string("post_transform", "NONE")), DType::F32)};
}

std::vector<TensorBoxPtr> lower_linear_classifier(LowerCtx& c) {
  const TensorBoxPtr& x = samples(c);
  if (c.node.has_attr("classlabels_strings")) c.unsupported("string class labels");
  const std::vector<int64_t> labels = c.node.attr_ints("classlabels_ints");
  const int64_t rows = static_cast<int64_t>(float_values(c, "coefficients").size()) /
                       std::max<int64_t>(x->size[1], 1);
  if (rows < 2)
    c.unsupported(
        "one row of coefficients (onnxruntime's binary form, labelled by a rule of "
        "its own)");
  if (labels.size() != static_cast<size_t>(rows))
    c.error("classlabels_ints has ", labels.size(), " labels for ", rows, " rows");
  const TensorBoxPtr scores = linear(c, x, rows);
  auto best = std::make_shared<ComputedDef>();
  best->is_reduction = true;
  best->ranges = {x->size[0]};
  best->reduction_ranges = {rows};
  best->reduce = ReduceKind::ArgMax;
  best->rfn = [scores](KernelBuilder& b, const std::vector<Index>& o, const std::vector<Index>& r) {
    return scores->load(b, {o[0], r[0]});
  };
  best->origin = c.origin();
  const TensorBoxPtr k = make_reduction_box(DType::I64, best);
  c.gl.realize(k);
  const TensorBoxPtr label_t = table(c.gl, ml::doubles(labels), false, c.origin() + " labels");
  const TensorBoxPtr label = make_pointwise_box(
      DType::I64, {x->size[0]},
      [k, label_t, rows](KernelBuilder& b, const std::vector<Index>& i) {
        const V at = b.check_index(k->load(b, i), rows, "LinearClassifier: a class");
        return label_t->load(b, {ix_value(at.id)});
      },
      c.origin());
  return {label,
          cast_to(c, post_transformed(c, scores, c.node.attr_string("post_transform", "NONE")),
                  DType::F32)};
}

}  // namespace

void register_ml_linear_ops(LoweringTable& t) {
  t.add(str_cat(kMl, "Scaler"), lower_scaler);
  t.add(str_cat(kMl, "Normalizer"), lower_normalizer);
  t.add(str_cat(kMl, "Imputer"), lower_imputer);
  t.add(str_cat(kMl, "LinearRegressor"), lower_linear_regressor);
  t.add(str_cat(kMl, "LinearClassifier"), lower_linear_classifier);
}

}  // namespace ferrite
