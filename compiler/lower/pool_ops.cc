// Pooling as windowed reductions: the window offsets are reduction dimensions, padding is a
// mask (masked lanes read nothing), and AveragePool divides by the exact count of window
// positions inside the input (or inside input + pads, with count_include_pad). MaxPool's
// optional Indices output is an ArgMax over the same windows. Along a dim whose window has
// more offsets than the input has positions (kernel_shape 2^62), the reduction runs over the
// input's positions instead, masked to the window (pool_geometry.h): the work is bounded by
// the input, whatever the kernel, pads or dilations.
#include <algorithm>
#include <limits>
#include <string>

#include "compiler/graph/layout_attr.h"
#include "compiler/lower/lowering.h"
#include "compiler/lower/pool_geometry.h"

namespace ferrite {
namespace {

using WindowFn =
    std::function<V(KernelBuilder&, const std::vector<Index>&, const std::vector<Index>&)>;

// src[idx] where `cond` (null: true) holds and every checked[d] lies in [0, bound[d]) (read
// under that mask), else `fill`.
V load_checked(KernelBuilder& b, const TensorBoxPtr& src, const std::vector<Index>& idx,
               const std::vector<Index>& checked, const std::vector<int64_t>& bound, double fill,
               V cond = V{}) {
  if (checked.empty() && cond.id < 0) return src->load(b, idx);
  V inside = cond.id >= 0 ? cond : b.constant(ScalarType::Bool, 1);
  for (size_t d = 0; d < checked.size(); ++d) {
    const V p = b.index_value(checked[d]);
    inside = b.binary(Op::And, inside, b.binary(Op::Ge, p, b.constant(ScalarType::I64, 0)));
    inside = b.binary(Op::And, inside, b.binary(Op::Lt, p, b.index_value(ix_const(bound[d]))));
  }
  V v;
  {
    MaskScope scope(b, inside);
    v = src->load(b, idx);
  }
  return b.where(inside, v, b.constant(v.type, fill));
}

// The element of reduction point `w` for output position `o` ([N, C, out...]), or the
// reduction's neutral `fill` (-inf for max, 0 for sums) where it is outside the window or
// over the padding. `padded`: src is x padded along the dims that need it (padded_input),
// read without bounds tests.
WindowFn window_loader(const TensorBoxPtr& src, const PoolGeometry& g, double fill, bool padded) {
  return [src, g, fill, padded](KernelBuilder& b, const std::vector<Index>& o,
                                const std::vector<Index>& w) {
    std::vector<Index> idx{o[0], o[1]}, checked;
    std::vector<int64_t> bound;
    V cond;
    for (size_t d = 0; d < g.rank(); ++d) {
      if (g.over_input[d]) {
        idx.push_back(w[d]);
        const V in = in_window(b, g, d, o[2 + d], w[d]);
        cond = cond.id < 0 ? in : b.binary(Op::And, cond, in);
        continue;
      }
      const Index p = ix_add(g.start(d, o[2 + d]), ix_mul(w[d], g.dilations[d]));
      if (padded && g.leaves_input(d)) {
        idx.push_back(ix_add(p, ix_const(g.pad_begin[d])));
      } else {
        idx.push_back(p);
        if (g.leaves_input(d)) {
          checked.push_back(p);
          bound.push_back(g.spatial[d]);
        }
      }
    }
    return load_checked(b, src, idx, checked, bound, fill, cond);
  };
}

// What padding reads in a max pool: -inf, or the integer type's lowest value (so that a
// backend sees the padded window inside the type's range: the JIT takes uint8 pools in
// int32 lanes).
double lowest(DType t) {
  switch (t) {
    case DType::U8:
    case DType::U16:
    case DType::U32:
    case DType::U64:
    case DType::U4:
    case DType::U2:
    case DType::Bool:
      return 0;
    case DType::I8:
      return -128;
    case DType::I16:
      return -32768;
    case DType::I32:
      return -2147483648.0;
    case DType::I4:
      return -8;
    case DType::I2:
      return -2;
    default:
      return dtype_is_float(t) ? -std::numeric_limits<double>::infinity()
                               : -9223372036854775808.0;  // int64, exact in a double
  }
}

// MaxPool's Indices: the first maximum of each window (ArgMax over the reduction points),
// as a flat position in the input: (n * C + c) * prod(spatial) plus the spatial position,
// row-major (storage_order 0) or with the first spatial dim fastest (storage_order 1).
TensorBoxPtr max_pool_indices(const LowerCtx& c, const TensorBoxPtr& x, const PoolGeometry& g) {
  const int64_t order = c.node.attr_int("storage_order", 0);
  if (order != 0 && order != 1) c.error("storage_order must be 0 or 1, got ", order);
  const size_t k = g.rank();
  auto def = std::make_shared<ComputedDef>();
  def->is_reduction = true;
  def->reduce = ReduceKind::ArgMax;
  def->origin = c.origin();
  def->ranges = {x->size[0], x->size[1]};
  def->ranges.insert(def->ranges.end(), g.out.begin(), g.out.end());
  for (size_t d = 0; d < k; ++d) def->reduction_ranges.push_back(g.reduce_range(d));
  def->rfn = window_loader(x, g, lowest(x->dtype), false);
  const int64_t channels = x->size[1];
  def->post = [g, k, channels, order](KernelBuilder& b, V wl) {
    auto i64 = [&](int64_t v) { return b.index_value(ix_const(v)); };
    // Reduction point d of the row-major linear index, then the input position.
    std::vector<V> pos(k);
    int64_t inner = 1;
    for (size_t d = k; d-- > 0;) {
      V w = b.binary(Op::Mod, b.binary(Op::Div, wl, i64(inner)), i64(g.reduce_range(d)));
      inner *= g.reduce_range(d);
      const V start = b.index_value(g.start(d, ix_var(static_cast<int>(2 + d))));
      pos[d] =
          g.over_input[d] ? w : b.binary(Op::Add, start, b.binary(Op::Mul, w, i64(g.dilations[d])));
    }
    V plane = b.binary(Op::Add, b.binary(Op::Mul, b.loop_var(0), i64(channels)), b.loop_var(1));
    V flat = i64(0);
    int64_t stride = 1;
    for (size_t i = 0; i < k; ++i) {
      const size_t d = order == 0 ? k - 1 - i : i;
      flat = b.binary(Op::Add, flat, b.binary(Op::Mul, pos[d], i64(stride)));
      stride *= g.spatial[d];
    }
    return b.binary(Op::Add, flat, b.binary(Op::Mul, plane, i64(stride)));
  };
  TensorBoxPtr t = make_reduction_box(DType::I64, def);
  c.gl.realize(t);
  return t;
}

// The pointwise value fn (of logical [N, C, spatial...] indices, sizes `size`) realized
// with its dims stored in `var` order (stored dim var[d] is dim d), as a view in logical
// order.
TensorBoxPtr realized_in_order(LowerCtx& c, DType dtype, const std::vector<int64_t>& size,
                               const Loader& fn, const std::vector<int>& var) {
  std::vector<int64_t> stored(size.size());
  for (size_t d = 0; d < size.size(); ++d) stored[static_cast<size_t>(var[d])] = size[d];
  Loader stored_fn = [fn, var](KernelBuilder& b, const std::vector<Index>& s) {
    std::vector<Index> i;
    for (int v : var) i.push_back(s[static_cast<size_t>(v)]);
    return fn(b, i);
  };
  TensorBoxPtr p = make_pointwise_box(dtype, stored, stored_fn, c.origin());
  c.gl.realize(p);
  return permute_view(p, var);
}

// x padded with `fill` (the pool's neutral value) on every side a window reaches out of it
// (along the dims reduced over window offsets), realized (in the dim order `var` gives, as
// the pool's output) so that the pool reads every window without masks: the bounds are
// tested once per input element instead of once per window element (9 times for a 3x3
// window), which dominated resnet18's MaxPool on the portable backend. Null when no window
// leaves x, or when the padding outweighs the input or the window (pads of 10^6, whose copy
// would be mostly padding: masks are cheaper there).
TensorBoxPtr padded_input(LowerCtx& c, const TensorBoxPtr& x, const PoolGeometry& g, double fill,
                          const std::vector<int>& var) {
  std::vector<int64_t> size{x->size[0], x->size[1]};
  bool any = false;
  for (size_t d = 0; d < g.rank(); ++d) {
    if (!g.leaves_input(d)) {
      size.push_back(g.spatial[d]);
      continue;
    }
    const int64_t pads = g.pad_begin[d] + std::max<int64_t>(g.end_padding(d), 0);
    if (pads > std::max(g.spatial[d], 2 * g.kernel[d])) return nullptr;
    any = true;
    size.push_back(g.spatial[d] + pads);
  }
  if (!any) return nullptr;
  Loader fn = [x, g, fill](KernelBuilder& b, const std::vector<Index>& i) {
    std::vector<Index> idx{i[0], i[1]}, checked;
    std::vector<int64_t> bound;
    for (size_t d = 0; d < g.rank(); ++d) {
      if (!g.leaves_input(d)) {
        idx.push_back(i[2 + d]);
        continue;
      }
      idx.push_back(ix_add(i[2 + d], ix_const(-g.pad_begin[d])));
      checked.push_back(idx.back());
      bound.push_back(g.spatial[d]);
    }
    return load_checked(b, x, idx, checked, bound, fill);
  };
  return realized_in_order(c, x->dtype, size, fn, var);
}

// A pool of small windows as a pointwise kernel: the maximum (or the sum, divided by
// window_count) of the window's loads, in window order, each masked (read as -inf, or 0)
// only along the dims where its offset reaches out of x for some output. Neither a padded
// copy of x nor a reduction loop: a masked dim's bounds are tested once per output point
// (row) rather than once per window point, and the copy no longer streams x through memory
// twice (resnet18's 3x3/2 MaxPool over 64 x 112 x 112 took 0.32 ms to copy and 0.25 ms to
// reduce on the JIT, 0.35 ms in all now). MaxPool up to 16 points; AveragePool up to 25
// (5x5), so that its sum has one order on every backend, the window's, as torch and ONNX's
// reference sum it: a reduction's order is the backend's, and a window holding 1e30 and
// -1e30 beside small values (diff_2d58fba890) gave 0.04 on the reference, 0 on portable
// and 0.08 on the JIT. On the JIT the unrolled 5x5 is also faster (0.66 -> 0.55 ms over
// 64 x 56 x 56, stride 2: 0.51 -> 0.30 ms); on portable the masked loads cost more than the
// padded copy saves at stride 1 (about 40 -> 55 ms over 64 x 56 x 56, a noisy machine).
bool unrolled_window(const PoolGeometry& g, bool is_max) {
  const int64_t most = is_max ? 16 : 25;
  int64_t points = 1;
  for (int64_t k : g.kernel) {
    if (k > most) return false;
    points *= k;
    if (points > most) return false;
  }
  return true;
}

// LpPool's terms |x|^p and root s^(1/p).
TensorBoxPtr lp_power(LowerCtx& c, const TensorBoxPtr& x, double p) {
  return make_pointwise(c, {x}, x->dtype, [p](KernelBuilder& b, const std::vector<V>& v) {
    const V a = b.unary(Op::Abs, v[0]);
    if (p == 1) return a;
    if (p == 2) return b.binary(Op::Mul, a, a);
    return b.binary(Op::Pow, a, b.constant(a.type, p));
  });
}

V lp_root(KernelBuilder& b, V sum, double p) {
  if (p == 1) return sum;
  if (p == 2) return b.unary(Op::Sqrt, sum);
  return b.binary(Op::Pow, sum, b.constant(sum.type, 1 / p));
}

// The pool's output in logical [N, C, out...] order, stored in `var` order (see lower_pool).
TensorBoxPtr unrolled_pool(LowerCtx& c, const TensorBoxPtr& x, const PoolGeometry& g,
                           const std::vector<int>& var, bool is_max, bool include_pad, double lp) {
  const size_t k = g.rank();
  std::vector<std::vector<int64_t>> offsets{{}};  // every window point, row-major
  for (size_t d = 0; d < k; ++d) {
    std::vector<std::vector<int64_t>> next;
    for (const auto& o : offsets)
      for (int64_t w = 0; w < g.kernel[d]; ++w) {
        next.push_back(o);
        next.back().push_back(w);
      }
    offsets = std::move(next);
  }
  const double fill = is_max ? lowest(x->dtype) : 0.0;
  Loader fn = [x, g, k, offsets, fill, is_max, include_pad, lp](KernelBuilder& b,
                                                                const std::vector<Index>& o) {
    V acc;
    for (const std::vector<int64_t>& w : offsets) {
      std::vector<Index> idx{o[0], o[1]}, masked_pos;
      std::vector<int64_t> masked_size;
      for (size_t d = 0; d < k; ++d) {
        const int64_t shift = w[d] * g.dilations[d] - g.pad_begin[d];
        const Index p = ix_add(ix_mul(o[2 + d], g.strides[d]), ix_const(shift));
        idx.push_back(p);
        const int64_t last = (g.out[d] - 1) * g.strides[d] + shift;
        if (shift < 0 || last >= g.spatial[d]) {
          masked_pos.push_back(p);
          masked_size.push_back(g.spatial[d]);
        }
      }
      const V v = load_checked(b, x, idx, masked_pos, masked_size, fill);
      acc = acc.id < 0 ? v : b.binary(is_max ? Op::Max : Op::Add, acc, v);
    }
    if (is_max) return acc;
    if (lp > 0) return lp_root(b, acc, lp);
    const std::vector<Index> out(o.begin() + 2, o.end());
    return b.binary(Op::Div, acc, window_count(b, g, include_pad, out, acc.type));
  };
  std::vector<int64_t> size{x->size[0], x->size[1]};
  size.insert(size.end(), g.out.begin(), g.out.end());
  return realized_in_order(c, x->dtype, size, fn, var);
}

// Whether `x` is stored channels-last (a view whose channel dim has stride 1, as the outputs
// of convolutions that choose_conv_layout marked are): a pool over it then writes
// channels-last too, so that both sides are read and written along the contiguous channels
// (measured on resnet18's 3x3/2 MaxPool over 64 x 112 x 112: strided gathers along W made it
// as slow as a convolution).
bool stored_channels_last(const TensorBoxPtr& x) {
  return x->strided && x->size.size() >= 3 && x->size[1] > 1 && x->strided->strides[1] == 1;
}

// The pool as a reduction over the window (or, along over_input dims, over the input).
TensorBoxPtr reduced_pool(LowerCtx& c, const TensorBoxPtr& x, const PoolGeometry& g,
                          const std::vector<int>& var, bool is_max, bool include_pad, double lp) {
  const size_t k = g.rank();
  std::vector<int64_t> out_size{x->size[0], x->size[1]};
  out_size.insert(out_size.end(), g.out.begin(), g.out.end());
  auto def = std::make_shared<ComputedDef>();
  def->is_reduction = true;
  def->reduce = is_max ? ReduceKind::Max : ReduceKind::Sum;
  def->origin = c.origin();
  def->ranges.resize(k + 2);
  for (size_t d = 0; d < k + 2; ++d) def->ranges[static_cast<size_t>(var[d])] = out_size[d];
  for (size_t d = 0; d < k; ++d) def->reduction_ranges.push_back(g.reduce_range(d));
  const double fill = is_max ? lowest(x->dtype) : 0.0;
  const TensorBoxPtr padded = padded_input(c, x, g, fill, var);
  WindowFn window = window_loader(padded ? padded : x, g, fill, padded != nullptr);
  def->rfn = [window, var](KernelBuilder& b, const std::vector<Index>& o,
                           const std::vector<Index>& w) {
    std::vector<Index> nc_order;
    for (int v : var) nc_order.push_back(o[static_cast<size_t>(v)]);
    return window(b, nc_order, w);
  };
  if (lp > 0) {
    def->post = [lp](KernelBuilder& b, V sum) { return lp_root(b, sum, lp); };
  } else if (!is_max) {
    def->post = [g, k, include_pad, var](KernelBuilder& b, V sum) {
      std::vector<Index> out;
      for (size_t d = 0; d < k; ++d) out.push_back(ix_var(var[2 + d]));
      return b.binary(Op::Div, sum, window_count(b, g, include_pad, out, sum.type));
    };
  }
  TensorBoxPtr t = make_reduction_box(x->dtype, def);
  c.gl.realize(t);
  return t;
}

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

// MaxPool, AveragePool, and LpPool (lp = p > 0: the sum of |x|^p over the window, padding
// adding 0, then its p-th root).
std::vector<TensorBoxPtr> lower_pool(LowerCtx& c, bool is_max, double lp = 0) {
  TensorBoxPtr x = c.input(0);
  // MaxPool takes integers too (int8 and uint8 in the spec; padding reads the lowest value)
  if (!dtype_is_float(x->dtype) && (!is_max || x->dtype == DType::Bool)) {
    c.unsupported("non-float input");
  }
  if (lp > 0) x = lp_power(c, x, lp);
  if (x->size.size() < 3) c.error("input must have rank >= 3");
  const PoolGeometry g = pool_geometry(c, std::vector<int64_t>(x->size.begin() + 2, x->size.end()));
  const size_t k = g.rank();
  int64_t elements = x->size[0] * x->size[1];  // at most x's elements
  for (int64_t o : g.out)
    if (__builtin_mul_overflow(elements, o, &elements))
      c.error("the output has more than 2^63 elements (output spatial sizes ", dims_text(g.out),
              ")");
  const bool include_pad = c.node.attr_int("count_include_pad", 0) != 0;
  // var[d]: the loop (and stored) dim of output dim d: [N, C, spatial...] in order, or
  // channels-last [N, spatial..., C].
  std::vector<int> var(k + 2);
  for (size_t d = 0; d < k + 2; ++d) var[d] = static_cast<int>(d);
  // Channels-last where the input is stored so, or where choose_conv_layout put the pool in
  // a channels-last region (its input computed from a convolution's channels-last output).
  const bool last = stored_channels_last(x) ||
                    (k > 0 && c.node.attr_string(kStoreAttr, "") == kChannelsLastLayout);
  if (last) {
    var[1] = static_cast<int>(k + 1);
    for (size_t d = 0; d < k; ++d) var[2 + d] = static_cast<int>(1 + d);
  }
  TensorBoxPtr t;
  if (unrolled_window(g, is_max)) {
    t = unrolled_pool(c, x, g, var, is_max, include_pad, lp);
  } else {
    t = reduced_pool(c, x, g, var, is_max, include_pad, lp);
    if (last) t = permute_view(t, var);
  }
  // An Indices output nobody reads is dropped with the other dead steps (emit_plan).
  if (!is_max || c.node.outputs.size() < 2 || !c.node.outputs[1]) return {t};
  return {t, max_pool_indices(c, x, g)};
}

std::vector<TensorBoxPtr> lower_global_pool(LowerCtx& c, bool is_max) {
  const TensorBoxPtr& x = c.input(0);
  if (!dtype_is_float(x->dtype)) c.unsupported("non-float input");
  if (x->size.size() < 3) c.error("input must have rank >= 3");
  std::vector<int> axes;
  int64_t n = 1;
  for (size_t d = 2; d < x->size.size(); ++d) {
    axes.push_back(static_cast<int>(d));
    n *= x->size[d];
  }
  double count = static_cast<double>(n);
  std::function<V(KernelBuilder&, V)> post;
  if (!is_max)
    post = [count](KernelBuilder& b, V v) {
      return b.binary(Op::Div, v, b.constant(v.type, count));
    };
  return {make_reduction(c, x, axes, true, is_max ? ReduceKind::Max : ReduceKind::Sum, x->dtype,
                         nullptr, post)};
}

}  // namespace

void register_pool_ops(LoweringTable& t) {
  t.add("MaxPool", [](LowerCtx& c) { return lower_pool(c, true); });
  t.add("AveragePool", [](LowerCtx& c) { return lower_pool(c, false); });
  t.add("LpPool", [](LowerCtx& c) {
    const int64_t p = c.node.attr_int("p", 2);
    if (p < 1) c.error("p must be >= 1, got ", p);
    return lower_pool(c, false, static_cast<double>(p));
  });
  t.add("GlobalMaxPool", [](LowerCtx& c) { return lower_global_pool(c, true); });
  t.add("GlobalAveragePool", [](LowerCtx& c) { return lower_global_pool(c, false); });
}

}  // namespace ferrite
