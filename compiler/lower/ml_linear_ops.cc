// The ai.onnx.ml ops of scikit-learn's preprocessing and linear models, on numbers:
//   Scaler            y = (x - offset) * scale (one value or one per feature), float32
//   Normalizer        each row over its max, L1 or L2 norm (unchanged where that is 0)
//   Imputer           x where it is not replaced_value (NaN: where x is NaN), else the
//                     imputed value (one or one per feature)
//   LinearRegressor   x · coefficientsᵀ + intercepts, then post_transform, float32
//   OneHotEncoder     int64 categories: one float32 0/1 per category
//   LabelEncoder      numbers to numbers by key (default where no key matches)
//   FeatureVectorizer the inputs' columns side by side, float32
//   LinearClassifier  scores = x · coefficientsᵀ + intercepts, the label of the first best
//                     score (int64 labels), the scores through post_transform; one row of
//                     coefficients for two labels as onnxruntime writes it.
// Computed in float64, as onnxruntime's CPU kernels compute them in float and double alike to
// within rounding.
#include <algorithm>
#include <cmath>
#include <utility>

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
  // assign(n, x) must not be given a reference into the vector (libc++, wasm's, reads it
  // after freeing the old storage).
  const double one = values.size() == 1 ? values[0] : 0.0;
  if (values.size() == 1) values.assign(static_cast<size_t>(features), one);
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

// One row of coefficients for two labels (scikit-learn's binary form), as onnxruntime
// writes it: label 1 where s > 0; scores [1 - p, p], p = logistic(s) with LOGISTIC, else s
// (SOFTMAX included: it is not applied).
std::vector<TensorBoxPtr> binary_linear_classifier(LowerCtx& c, const TensorBoxPtr& x,
                                                   const std::vector<int64_t>& labels,
                                                   const std::string& post) {
  if (post != "NONE" && post != "LOGISTIC" && post != "SOFTMAX")
    c.unsupported("post_transform ", post, " (NONE, LOGISTIC or SOFTMAX)");
  const TensorBoxPtr s = linear(c, x, 1);  // [N, 1]
  const int64_t l0 = labels[0], l1 = labels[1];
  const TensorBoxPtr label =
      make_pointwise(c, {reshape_view(s, {x->size[0]})}, DType::I64,
                     [l0, l1](KernelBuilder& b, const std::vector<V>& v) {
                       return b.where(b.binary(Op::Gt, v[0], b.constant(ScalarType::F64, 0)),
                                      b.constant_i64(l1), b.constant_i64(l0));
                     });
  const bool logistic = post == "LOGISTIC";
  const TensorBoxPtr scores = make_pointwise_box(
      DType::F32, {x->size[0], 2},
      [s, logistic](KernelBuilder& b, const std::vector<Index>& i) {
        V p = s->load(b, {i[0], ix_const(0)});
        if (logistic) p = b.unary(Op::Sigmoid, p);
        const V second = b.binary(Op::Eq, b.index_value(i[1]), b.constant_i64(1));
        return b.cast(b.where(second, p, b.binary(Op::Sub, b.constant(ScalarType::F64, 1), p)),
                      ScalarType::F32);
      },
      c.origin());
  return {label, scores};
}

std::vector<TensorBoxPtr> lower_linear_classifier(LowerCtx& c) {
  const TensorBoxPtr& x = samples(c);
  if (c.node.has_attr("classlabels_strings")) c.unsupported("string class labels");
  const std::vector<int64_t> labels = c.node.attr_ints("classlabels_ints");
  const int64_t rows = static_cast<int64_t>(float_values(c, "coefficients").size()) /
                       std::max<int64_t>(x->size[1], 1);
  const std::string post = c.node.attr_string("post_transform", "NONE");
  if (rows == 1 && labels.size() == 2) return binary_linear_classifier(c, x, labels, post);
  if (rows < 2) c.error(rows, " rows of coefficients for ", labels.size(), " labels");
  if (labels.size() != static_cast<size_t>(rows))
    c.error("classlabels_ints has ", labels.size(), " labels for ", rows, " rows");
  const TensorBoxPtr scores = linear(c, x, rows);
  const TensorBoxPtr label_t = table(c.gl, ml::doubles(labels), false, c.origin() + " labels");
  const TensorBoxPtr label = ml::first_best_label(c, scores, label_t);
  return {label,
          cast_to(c, post_transformed(c, scores, c.node.attr_string("post_transform", "NONE")),
                  DType::F32)};
}

// OneHotEncoder (int64 categories): y[..., k] = 1 where x equals category k, else 0
// (float32); a value of no category is all zeros, or an error with zeros = 0.
std::vector<TensorBoxPtr> lower_one_hot_encoder(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  if (c.node.has_attr("cats_strings")) c.unsupported("string categories");
  const std::vector<int64_t> cats = c.node.attr_ints("cats_int64s");
  if (cats.empty()) c.error("cats_int64s is required");
  const bool zeros = c.node.attr_int("zeros", 1) != 0;
  const int64_t n = static_cast<int64_t>(cats.size());
  const TensorBoxPtr cat_t = table(c.gl, ml::doubles(cats), false, c.origin() + " categories");
  std::vector<int64_t> out = x->size;
  out.push_back(n);
  Loader fn = [x, cat_t, zeros, n](KernelBuilder& b, const std::vector<Index>& i) {
    const std::vector<Index> xi(i.begin(), i.end() - 1);
    const V v = as_f64(b, x->load(b, xi));
    const V hit = b.binary(Op::Eq, v, b.cast(cat_t->load(b, {i.back()}), ScalarType::F64));
    if (zeros) return b.where(hit, b.constant(ScalarType::F32, 1), b.constant(ScalarType::F32, 0));
    // zeros = 0: the first matching category, checked (n where none matches fails the run).
    V first = b.constant_i64(n);
    for (int64_t k = n; k-- > 0;) {
      const V is_k = b.binary(Op::Eq, v, b.cast(cat_t->load(b, {ix_const(k)}), ScalarType::F64));
      first = b.where(is_k, b.constant_i64(k), first);
    }
    const V at = b.check_index(first, n, "OneHotEncoder: a value of no category (zeros = 0)");
    return b.where(b.binary(Op::Eq, at, b.index_value(i.back())), b.constant(ScalarType::F32, 1),
                   b.constant(ScalarType::F32, 0));
  };
  return {make_pointwise_box(DType::F32, out, fn, c.origin())};
}

// Numbers of a LabelEncoder attribute trio (`ints`, `floats` or a tensor); `*is_float` says
// which; empty when none is given. String ones are UnsupportedError.
std::vector<double> encoder_numbers(const LowerCtx& c, const std::string& stem, bool* is_float) {
  if (c.node.has_attr(stem + "_strings")) c.unsupported("string ", stem);
  if (c.node.has_attr(stem + "_int64s")) {
    *is_float = false;
    return ml::doubles(c.node.attr_ints(stem + "_int64s"));
  }
  if (c.node.has_attr(stem + "_floats")) {
    *is_float = true;
    return float_values(c, stem + "_floats");
  }
  if (c.node.has_attr(stem + "_tensor")) {
    const auto t = c.node.attr_tensor(stem + "_tensor");
    if (t->dtype == DType::String) c.unsupported("string ", stem);
    *is_float = dtype_is_float(t->dtype);
    return float_values(c, stem + "_tensor");
  }
  return {};
}

// LabelEncoder on numbers: each x mapped to the value of the key equal to it (a binary
// search over the sorted keys), else to the default.
std::vector<TensorBoxPtr> lower_label_encoder(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  bool float_keys = false, float_values_ = false;
  std::vector<double> keys = encoder_numbers(c, "keys", &float_keys);
  const std::vector<double> values = encoder_numbers(c, "values", &float_values_);
  if (keys.size() != values.size() || keys.empty())
    c.error("keys and values must be given, of one length (", keys.size(), " and ", values.size(),
            ")");
  if (float_keys != dtype_is_float(x->dtype))
    c.error("X of ", dtype_name(x->dtype), " for ", float_keys ? "float" : "integer", " keys");
  double dflt = float_values_ ? -0.0 : -1.0;
  if (c.node.has_attr("default_tensor")) {
    dflt = c.node.attr_tensor("default_tensor")->float_at(0);
  } else if (float_values_) {
    dflt = c.node.attr_float("default_float", -0.0);
  } else {
    dflt = static_cast<double>(c.node.attr_int("default_int64", -1));
  }
  // Sorted (key, value) pairs; a NaN key equals nothing (onnxruntime maps a NaN x to the
  // default), so it is left out.
  std::vector<std::pair<double, double>> pairs;
  for (size_t i = 0; i < keys.size(); ++i)
    if (!std::isnan(keys[i])) pairs.push_back({keys[i], values[i]});
  if (pairs.empty()) c.error("no key can match (every key is NaN)");
  std::sort(pairs.begin(), pairs.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 1; i < pairs.size(); ++i)
    if (pairs[i].first == pairs[i - 1].first) c.error("key ", pairs[i].first, " is given twice");
  std::vector<double> sk, sv;
  for (const auto& p : pairs) {
    sk.push_back(p.first);
    sv.push_back(p.second);
  }
  const int64_t n = static_cast<int64_t>(sk.size());
  const TensorBoxPtr kt = table(c.gl, sk, float_keys, c.origin() + " keys"),
                     vt = table(c.gl, sv, true, c.origin() + " values");
  const DType out = float_values_ ? DType::F32 : DType::I64;
  const ScalarType key_type = float_keys ? ScalarType::F64 : ScalarType::I64;
  Loader fn = [x, kt, vt, n, dflt, key_type, out](KernelBuilder& b, const std::vector<Index>& i) {
    const V raw = x->load(b, i);
    const V v = raw.type == key_type ? raw : b.cast(raw, key_type);
    V lo = b.constant_i64(0), hi = b.constant_i64(n);
    for (int64_t span = n; span > 0; span /= 2) {  // lo: the first key >= v
      const V mid = b.binary(Op::Div, b.binary(Op::Add, lo, hi), b.constant_i64(2));
      const V at =
          b.check_index(b.binary(Op::Min, mid, b.constant_i64(n - 1)), n, "LabelEncoder: a key");
      const V less = b.binary(Op::Lt, kt->load(b, {ix_value(at.id)}), v);
      const V live = b.binary(Op::Lt, lo, hi);
      lo = b.where(b.binary(Op::And, live, less), b.binary(Op::Add, mid, b.constant_i64(1)), lo);
      hi = b.where(b.binary(Op::And, live, b.unary(Op::Not, less)), mid, hi);
    }
    const V at =
        b.check_index(b.binary(Op::Min, lo, b.constant_i64(n - 1)), n, "LabelEncoder: a key");
    const V found = b.binary(Op::And, b.binary(Op::Lt, lo, b.constant_i64(n)),
                             b.binary(Op::Eq, kt->load(b, {ix_value(at.id)}), v));
    V r = b.where(found, vt->load(b, {ix_value(at.id)}), b.constant(ScalarType::F64, dflt));
    return b.cast(r, compute_type(out));
  };
  return {make_pointwise_box(out, x->size, fn, c.origin())};
}

// FeatureVectorizer: the inputs' columns side by side as float32 (input i [N, C_i] gives
// inputdimensions[i] columns: its first ones, zeros past C_i).
std::vector<TensorBoxPtr> lower_feature_vectorizer(LowerCtx& c) {
  const std::vector<int64_t> dims = c.node.attr_ints("inputdimensions");
  if (dims.size() != c.in.size())
    c.error("inputdimensions has ", dims.size(), " entries for ", c.in.size(), " inputs");
  std::vector<TensorBoxPtr> parts;
  int64_t rows = -1;
  for (size_t i = 0; i < c.in.size(); ++i) {
    const TensorBoxPtr& x = c.input(i);
    if (x->size.size() != 2 && x->size.size() != 1) c.error("input ", i, " must be [N, C] or [C]");
    const int64_t n = x->size.size() == 2 ? x->size[0] : 1, cols = x->size.back();
    if (rows >= 0 && n != rows) c.error("input ", i, " has ", n, " rows, input 0 ", rows);
    rows = n;
    if (dims[i] < 0) c.error("inputdimensions[", i, "] = ", dims[i]);
    const TensorBoxPtr x2 = x->size.size() == 2 ? x : reshape_view(x, {1, cols});
    parts.push_back(make_pointwise_box(
        DType::F32, {n, dims[i]},
        [x2, cols](KernelBuilder& b, const std::vector<Index>& j) {
          const V inside = b.binary(Op::Lt, b.index_value(j[1]), b.constant_i64(cols));
          MaskScope scope(b, inside);
          return b.where(inside, b.cast(x2->load(b, j), ScalarType::F32),
                         b.constant(ScalarType::F32, 0));
        },
        c.origin()));
  }
  if (parts.empty()) c.error("no inputs");
  return {parts.size() == 1 ? parts[0] : concat_values(c.gl, parts, 1, c.origin())};
}

}  // namespace

void register_ml_linear_ops(LoweringTable& t) {
  t.add(str_cat(kMl, "FeatureVectorizer"), lower_feature_vectorizer);
  t.add(str_cat(kMl, "LabelEncoder"), lower_label_encoder);
  t.add(str_cat(kMl, "OneHotEncoder"), lower_one_hot_encoder);
  t.add(str_cat(kMl, "Scaler"), lower_scaler);
  t.add(str_cat(kMl, "Normalizer"), lower_normalizer);
  t.add(str_cat(kMl, "Imputer"), lower_imputer);
  t.add(str_cat(kMl, "LinearRegressor"), lower_linear_regressor);
  t.add(str_cat(kMl, "LinearClassifier"), lower_linear_classifier);
}

}  // namespace ferrite
