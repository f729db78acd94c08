// Normalizations: BatchNormalization (inference), LayerNormalization, InstanceNormalization,
// GroupNormalization, RMSNormalization, MeanVarianceNormalization, LpNormalization and LRN.
// Statistics are reductions (realized); the normalisation is a pointwise epilogue.
#include <algorithm>

#include "compiler/lower/lowering.h"

namespace ferrite {
namespace {

// [C] → [C, 1, ..., 1] so that it broadcasts against [N, C, d1, ..., dk].
TensorBoxPtr per_channel(const TensorBoxPtr& t, size_t rank) {
  std::vector<int64_t> s{t->elements()};
  for (size_t i = 2; i < rank; ++i) s.push_back(1);
  return reshape_view(t, s);
}

std::vector<TensorBoxPtr> lower_batchnorm_training(LowerCtx& c);

std::vector<TensorBoxPtr> lower_batchnorm(LowerCtx& c) {
  if (c.node.attr_int("training_mode", 0) != 0) return lower_batchnorm_training(c);
  const TensorBoxPtr& x = c.input(0);
  if (!dtype_is_float(x->dtype)) c.unsupported("non-float input");
  size_t r = x->size.size();
  if (r < 2) c.error("input must have rank >= 2");
  int64_t ch = x->size[1];
  for (size_t i = 1; i <= 4; ++i) {
    if (c.input(i)->elements() != ch) c.error("input ", i, " must have ", ch, " elements");
  }
  double eps = c.node.attr_float("epsilon", 1e-5);
  std::vector<TensorBoxPtr> ins{x};
  for (size_t i = 1; i <= 4; ++i) ins.push_back(per_channel(c.input(i), r));
  return {make_pointwise(c, ins, x->dtype, [eps](KernelBuilder& b, const std::vector<V>& v) {
    ScalarType t = v[0].type;
    V var = b.cast(v[4], t), mean = b.cast(v[3], t);
    V inv = b.unary(Op::Rsqrt, b.binary(Op::Add, var, b.constant(t, eps)));
    V y = b.binary(Op::Mul, b.binary(Op::Sub, v[0], mean), inv);
    return b.binary(Op::Add, b.binary(Op::Mul, y, b.cast(v[1], t)), b.cast(v[2], t));
  })};
}

struct Moments {
  TensorBoxPtr mean, inv_std;
};

// Mean and 1/sqrt(var + eps) over `axes` (keepdims), two-pass for accuracy.
Moments moments(LowerCtx& c, const TensorBoxPtr& x, const std::vector<int>& axes, double eps) {
  int64_t n = 1;
  for (int a : axes) n *= x->size[a];
  double count = static_cast<double>(n);
  auto div_n = [count](KernelBuilder& b, V v) {
    return b.binary(Op::Div, v, b.constant(v.type, count));
  };
  Moments m;
  m.mean = make_reduction(c, x, axes, true, ReduceKind::Sum, x->dtype, nullptr, div_n);
  TensorBoxPtr sq =
      make_pointwise(c, {x, m.mean}, x->dtype, [](KernelBuilder& b, const std::vector<V>& v) {
        V d = b.binary(Op::Sub, v[0], v[1]);
        return b.binary(Op::Mul, d, d);
      });
  m.inv_std = make_reduction(
      c, sq, axes, true, ReduceKind::Sum, x->dtype, nullptr, [count, eps](KernelBuilder& b, V v) {
        V var = b.binary(Op::Div, v, b.constant(v.type, count));
        return b.unary(Op::Rsqrt, b.binary(Op::Add, var, b.constant(v.type, eps)));
      });
  return m;
}

std::vector<TensorBoxPtr> lower_layernorm(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  if (!dtype_is_float(x->dtype)) c.unsupported("non-float input");
  size_t r = x->size.size();
  int axis = c.axis(c.node.attr_int("axis", -1), r);
  std::vector<int> axes;
  for (size_t d = axis; d < r; ++d) axes.push_back(static_cast<int>(d));
  Moments m = moments(c, x, axes, c.node.attr_float("epsilon", 1e-5));
  std::vector<TensorBoxPtr> ins{x, m.mean, m.inv_std, c.input(1)};
  bool bias = c.has(2);
  if (bias) ins.push_back(c.input(2));
  TensorBoxPtr y =
      make_pointwise(c, ins, x->dtype, [bias](KernelBuilder& b, const std::vector<V>& v) {
        V n = b.binary(Op::Mul, b.binary(Op::Sub, v[0], v[1]), v[2]);
        n = b.binary(Op::Mul, n, v[3]);
        return bias ? b.binary(Op::Add, n, v[4]) : n;
      });
  return {y, m.mean, m.inv_std};
}

std::vector<TensorBoxPtr> lower_instancenorm(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  if (!dtype_is_float(x->dtype)) c.unsupported("non-float input");
  size_t r = x->size.size();
  if (r < 3) c.error("input must have rank >= 3");
  std::vector<int> axes;
  for (size_t d = 2; d < r; ++d) axes.push_back(static_cast<int>(d));
  Moments m = moments(c, x, axes, c.node.attr_float("epsilon", 1e-5));
  std::vector<TensorBoxPtr> ins{x, m.mean, m.inv_std, per_channel(c.input(1), r),
                                per_channel(c.input(2), r)};
  return {make_pointwise(c, ins, x->dtype, [](KernelBuilder& b, const std::vector<V>& v) {
    V n = b.binary(Op::Mul, b.binary(Op::Sub, v[0], v[1]), v[2]);
    return b.binary(Op::Add, b.binary(Op::Mul, n, v[3]), v[4]);
  })};
}

// BatchNormalization in training mode (14, 15): normalized by the batch's own mean and
// (biased) variance over every axis but the channels; also returns the running statistics
// moved by momentum: running * momentum + batch * (1 - momentum).
std::vector<TensorBoxPtr> lower_batchnorm_training(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  if (!dtype_is_float(x->dtype)) c.unsupported("non-float input");
  const size_t r = x->size.size();
  if (r < 2) c.error("input must have rank >= 2");
  const int64_t ch = x->size[1];
  for (size_t i = 1; i <= 4; ++i) {
    if (c.input(i)->elements() != ch) c.error("input ", i, " must have ", ch, " elements");
  }
  std::vector<int> axes{0};
  for (size_t d = 2; d < r; ++d) axes.push_back(static_cast<int>(d));
  const double eps = c.node.attr_float("epsilon", 1e-5);
  const double momentum = c.node.attr_float("momentum", 0.9);
  int64_t count = 1;
  for (int a : axes) count *= x->size[static_cast<size_t>(a)];
  auto div_n = [count](KernelBuilder& b, V v) {
    return b.binary(Op::Div, v, b.constant(v.type, static_cast<double>(count)));
  };
  TensorBoxPtr mean = make_reduction(c, x, axes, true, ReduceKind::Sum, x->dtype, nullptr, div_n);
  TensorBoxPtr sq =
      make_pointwise(c, {x, mean}, x->dtype, [](KernelBuilder& b, const std::vector<V>& v) {
        const V d = b.binary(Op::Sub, v[0], v[1]);
        return b.binary(Op::Mul, d, d);
      });
  TensorBoxPtr var = make_reduction(c, sq, axes, true, ReduceKind::Sum, x->dtype, nullptr, div_n);
  std::vector<TensorBoxPtr> ins{x, mean, var, per_channel(c.input(1), r),
                                per_channel(c.input(2), r)};
  TensorBoxPtr y =
      make_pointwise(c, ins, x->dtype, [eps](KernelBuilder& b, const std::vector<V>& v) {
        const V inv = b.unary(Op::Rsqrt, b.binary(Op::Add, v[2], b.constant(v[2].type, eps)));
        const V n = b.binary(Op::Mul, b.binary(Op::Sub, v[0], v[1]), inv);
        return b.binary(Op::Add, b.binary(Op::Mul, n, v[3]), v[4]);
      });
  auto running = [&](size_t input, const TensorBoxPtr& batch) {
    return make_pointwise(c, {reshape_view(c.input(input), {ch}), reshape_view(batch, {ch})},
                          x->dtype, [momentum](KernelBuilder& b, const std::vector<V>& v) {
                            const V keep = b.binary(Op::Mul, v[0], b.constant(v[0].type, momentum));
                            return b.binary(Op::Add, keep,
                                            b.binary(Op::Mul, b.cast(v[1], v[0].type),
                                                     b.constant(v[0].type, 1 - momentum)));
                          });
  };
  return {y, running(3, mean), running(4, var)};
}

// The axes [axis, rank) of a normalization over the trailing dims.
std::vector<int> trailing_axes(const LowerCtx& c, size_t rank) {
  if (rank == 0) c.error("input must have rank >= 1");
  std::vector<int> axes;
  for (size_t d = c.axis(c.node.attr_int("axis", -1), rank); d < rank; ++d) {
    axes.push_back(static_cast<int>(d));
  }
  return axes;
}

// RMSNormalization (23): x / sqrt(mean(x^2) + epsilon) * scale over [axis, rank).
std::vector<TensorBoxPtr> lower_rmsnorm(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  if (!dtype_is_float(x->dtype)) c.unsupported("non-float input");
  const std::vector<int> axes = trailing_axes(c, x->size.size());
  int64_t n = 1;
  for (int a : axes) n *= x->size[a];
  const double count = static_cast<double>(n), eps = c.node.attr_float("epsilon", 1e-5);
  TensorBoxPtr inv_rms = make_reduction(
      c, x, axes, true, ReduceKind::Sum, x->dtype,
      [](KernelBuilder& b, V v) { return b.binary(Op::Mul, v, v); },
      [count, eps](KernelBuilder& b, V v) {
        V ms = b.binary(Op::Div, v, b.constant(v.type, count));
        return b.unary(Op::Rsqrt, b.binary(Op::Add, ms, b.constant(v.type, eps)));
      });
  return {make_pointwise(c, {x, inv_rms, c.input(1)}, x->dtype,
                         [](KernelBuilder& b, const std::vector<V>& v) {
                           return b.binary(Op::Mul, b.binary(Op::Mul, v[0], v[1]), v[2]);
                         })};
}

// GroupNormalization (18, 21): channels split into num_groups groups, each normalized over
// its channels and the spatial dims; then scale and bias per channel (21) or per group (18).
std::vector<TensorBoxPtr> lower_groupnorm(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  if (!dtype_is_float(x->dtype)) c.unsupported("non-float input");
  const size_t r = x->size.size();
  if (r < 2) c.error("input must have rank >= 2");
  const int64_t groups = c.node.attr_int("num_groups", 0), ch = x->size[1];
  if (groups <= 0 || ch % groups != 0) {
    c.error("num_groups ", groups, " must be positive and divide the ", ch, " channels");
  }
  const int64_t per_param = c.opset >= 21 ? ch : groups;
  for (size_t i = 1; i <= 2; ++i) {
    if (c.input(i)->elements() != per_param) {
      c.error("input ", i, " must have ", per_param, " elements");
    }
  }
  int64_t inner = 1;
  for (size_t d = 2; d < r; ++d) inner *= x->size[d];
  const std::vector<int64_t> grouped{x->size[0], groups, ch / groups * inner};
  TensorBoxPtr xg = reshape_view(x, grouped);
  Moments m = moments(c, xg, {2}, c.node.attr_float("epsilon", 1e-5));
  TensorBoxPtr norm = make_pointwise(
      c, {xg, m.mean, m.inv_std}, x->dtype, [](KernelBuilder& b, const std::vector<V>& v) {
        return b.binary(Op::Mul, b.binary(Op::Sub, v[0], v[1]), v[2]);
      });
  norm = reshape_view(norm, x->size);
  TensorBoxPtr scale = c.input(1), bias = c.input(2);
  if (per_param != ch) {  // per group: repeat each over its channels
    auto per_group = [&](const TensorBoxPtr& t) {
      return reshape_view(expand_view(reshape_view(t, {groups, 1}), {groups, ch / groups}), {ch});
    };
    scale = per_group(scale);
    bias = per_group(bias);
  }
  return {make_pointwise(c, {norm, per_channel(scale, r), per_channel(bias, r)}, x->dtype,
                         [](KernelBuilder& b, const std::vector<V>& v) {
                           return b.binary(Op::Add, b.binary(Op::Mul, v[0], v[1]), v[2]);
                         })};
}

// MeanVarianceNormalization: (x - mean) / (std + 1e-9) over `axes` (default N, H, W), as
// the operator's function body (the epsilon is added to the deviation, not the variance).
std::vector<TensorBoxPtr> lower_mvn(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  if (!dtype_is_float(x->dtype)) c.unsupported("non-float input");
  const size_t r = x->size.size();
  std::vector<int> axes;
  for (int64_t a : c.node.attr_ints("axes", {0, 2, 3})) axes.push_back(c.axis(a, r));
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) c.error("repeated axis");
  Moments m = moments(c, x, axes, 0.0);
  return {make_pointwise(c, {x, m.mean, m.inv_std}, x->dtype,
                         [](KernelBuilder& b, const std::vector<V>& v) {
                           const V one = b.constant(v[0].type, 1);
                           V std_dev = b.binary(Op::Div, one, v[2]);
                           V den = b.binary(Op::Add, std_dev, b.constant(v[0].type, 1e-9));
                           return b.binary(Op::Div, b.binary(Op::Sub, v[0], v[1]), den);
                         })};
}

// LpNormalization: x / ||x||_p along one axis, p 1 or 2; 0 where the norm is 0.
std::vector<TensorBoxPtr> lower_lpnorm(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  if (!dtype_is_float(x->dtype)) c.unsupported("non-float input");
  const size_t r = x->size.size();
  if (r == 0) c.error("input must have rank >= 1");
  const int axis = c.axis(c.node.attr_int("axis", -1), r);
  const int64_t p = c.node.attr_int("p", 2);
  if (p != 1 && p != 2) c.error("p must be 1 or 2, got ", p);
  TensorBoxPtr norm = make_reduction(
      c, x, {axis}, true, ReduceKind::Sum, x->dtype,
      [p](KernelBuilder& b, V v) { return p == 1 ? b.unary(Op::Abs, v) : b.binary(Op::Mul, v, v); },
      [p](KernelBuilder& b, V v) { return p == 1 ? v : b.unary(Op::Sqrt, v); });
  return {make_pointwise(c, {x, norm}, x->dtype, [](KernelBuilder& b, const std::vector<V>& v) {
    const V zero = b.constant(v[0].type, 0);
    return b.where(b.binary(Op::Eq, v[1], zero), zero, b.binary(Op::Div, v[0], v[1]));
  })};
}

// LRN: y = x / (bias + alpha / size * s)^beta, s the sum of x^2 over the channels
// [c - floor((size-1)/2), c + ceil((size-1)/2)] that exist: a windowed reduction over the
// channel axis, padding masked as in pooling. Only the window offsets that reach a channel
// for some c are reduced over (at most 2C - 1 of them), so that a size of 2^62 costs no more
// than one of 2C - 1 (it would otherwise run for hours).
std::vector<TensorBoxPtr> lower_lrn(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  if (!dtype_is_float(x->dtype)) c.unsupported("non-float input");
  if (x->size.size() < 2) c.error("input must have rank >= 2");
  const int64_t size = c.node.attr_int("size", 0);
  if (size <= 0) c.error("size must be positive, got ", size);
  const double alpha = c.node.attr_float("alpha", 1e-4), beta = c.node.attr_float("beta", 0.75),
               bias = c.node.attr_float("bias", 1.0);
  const int64_t channels = x->size[1];
  // Offsets w in [first, last) of the window [c - before, c - before + size) are the ones
  // that land in [0, C) for some c in [0, C).
  const int64_t before = (size - 1) / 2;
  const int64_t first = std::max<int64_t>(0, before - (channels - 1));
  const int64_t last = std::min<int64_t>(size, before + channels);
  const int64_t shift = before - first;  // < C
  auto def = std::make_shared<ComputedDef>();
  def->is_reduction = true;
  def->reduce = ReduceKind::Sum;
  def->origin = c.origin();
  def->ranges = x->size;
  def->reduction_ranges = {std::max<int64_t>(last - first, 1)};
  TensorBoxPtr src = x;
  def->rfn = [src, shift, channels](KernelBuilder& b, const std::vector<Index>& o,
                                    const std::vector<Index>& w) {
    std::vector<Index> idx = o;
    idx[1] = ix_add(ix_add(o[1], w[0]), ix_const(-shift));
    V ch = b.index_value(idx[1]);
    V inside =
        b.binary(Op::And, b.binary(Op::Ge, ch, b.constant(ScalarType::I64, 0)),
                 b.binary(Op::Lt, ch, b.constant(ScalarType::I64, static_cast<double>(channels))));
    V v;
    {
      MaskScope scope(b, inside);
      v = src->load(b, idx);
    }
    return b.where(inside, b.binary(Op::Mul, v, v), b.constant(v.type, 0));
  };
  TensorBoxPtr sum = make_reduction_box(x->dtype, def);
  c.gl.realize(sum);
  const double scale = alpha / static_cast<double>(size);
  return {make_pointwise(
      c, {x, sum}, x->dtype, [scale, beta, bias](KernelBuilder& b, const std::vector<V>& v) {
        ScalarType t = v[0].type;
        V d = b.binary(Op::Add, b.constant(t, bias), b.binary(Op::Mul, b.constant(t, scale), v[1]));
        return b.binary(Op::Div, v[0], b.binary(Op::Pow, d, b.constant(t, beta)));
      })};
}

}  // namespace

void register_norm_ops(LoweringTable& t) {
  t.add("BatchNormalization", lower_batchnorm);
  t.add("LayerNormalization", lower_layernorm);
  t.add("InstanceNormalization", lower_instancenorm);
  t.add("LRN", lower_lrn);
  t.add("RMSNormalization", lower_rmsnorm);
  t.add("GroupNormalization", lower_groupnorm);
  t.add("MeanVarianceNormalization", lower_mvn);
  t.add("LpNormalization", lower_lpnorm);
}

}  // namespace ferrite
