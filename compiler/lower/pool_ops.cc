// Pooling as windowed reductions: the window offsets are reduction dimensions, padding is a
// mask (masked lanes read nothing), and AveragePool divides by the exact count of window
// positions inside the input (or inside input + pads, with count_include_pad). MaxPool's
// optional Indices output is an ArgMax over the same windows.
#include <algorithm>
#include <limits>

#include "compiler/lower/lowering.h"

namespace ferrite {
namespace {

struct PoolGeometry {
  std::vector<int64_t> kernel, strides, dilations, pad_begin, pad_end, out;
};

PoolGeometry pool_geometry(const LowerCtx& c, const std::vector<int64_t>& in) {
  size_t k = in.size();
  PoolGeometry g;
  g.kernel = c.node.attr_ints("kernel_shape");
  if (g.kernel.size() != k) c.error("kernel_shape needs ", k, " entries");
  g.strides = c.node.attr_ints("strides", std::vector<int64_t>(k, 1));
  g.dilations = c.node.attr_ints("dilations", std::vector<int64_t>(k, 1));
  std::vector<int64_t> pads = c.node.attr_ints("pads", std::vector<int64_t>(2 * k, 0));
  if (g.strides.size() != k || g.dilations.size() != k || pads.size() != 2 * k) {
    c.error("strides, dilations or pads have the wrong length");
  }
  std::string auto_pad = c.node.attr_string("auto_pad", "NOTSET");
  bool ceil_mode = c.node.attr_int("ceil_mode", 0) != 0;
  for (size_t d = 0; d < k; ++d) {
    int64_t s = g.strides[d], dil = g.dilations[d], kk = g.kernel[d];
    if (s <= 0 || dil <= 0 || kk <= 0) c.error("kernel, strides and dilations must be positive");
    int64_t span = (kk - 1) * dil + 1, pb = pads[d], pe = pads[d + k], o;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      o = (in[d] + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (o - 1) * s + span - in[d]);
      pb = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pe = total - pb;
    } else if (auto_pad == "VALID") {
      pb = pe = 0;
      o = in[d] >= span ? (in[d] - span) / s + 1 : 0;
    } else {
      if (auto_pad != "NOTSET") c.error("unknown auto_pad '", auto_pad, "'");
      int64_t len = in[d] + pb + pe - span;
      if (len < 0) c.error("window larger than the padded input");
      o = (ceil_mode ? (len + s - 1) / s : len / s) + 1;
      if (ceil_mode && (o - 1) * s >= in[d] + pb) --o;  // last window must start inside
    }
    g.pad_begin.push_back(pb);
    g.pad_end.push_back(pe);
    g.out.push_back(o);
  }
  return g;
}

using WindowFn =
    std::function<V(KernelBuilder&, const std::vector<Index>&, const std::vector<Index>&)>;

// src[idx] where every checked[d] lies in [0, bound[d]) (read under that mask), else `fill`.
V load_checked(KernelBuilder& b, const TensorBoxPtr& src, const std::vector<Index>& idx,
               const std::vector<Index>& checked, const std::vector<int64_t>& bound, double fill) {
  if (checked.empty()) return src->load(b, idx);
  V inside = b.constant(ScalarType::Bool, 1);
  for (size_t d = 0; d < checked.size(); ++d) {
    const V p = b.index_value(checked[d]);
    inside = b.binary(Op::And, inside, b.binary(Op::Ge, p, b.constant(ScalarType::I64, 0)));
    inside =
        b.binary(Op::And, inside,
                 b.binary(Op::Lt, p, b.constant(ScalarType::I64, static_cast<double>(bound[d]))));
  }
  V v;
  {
    MaskScope scope(b, inside);
    v = src->load(b, idx);
  }
  return b.where(inside, v, b.constant(v.type, fill));
}

// src[n, c, pos...] where every pos[d] lies in [0, spatial[d]), else `fill`.
V load_inside(KernelBuilder& b, const TensorBoxPtr& src, const Index& n, const Index& c,
              const std::vector<Index>& pos, const std::vector<int64_t>& spatial, double fill) {
  std::vector<Index> idx{n, c};
  idx.insert(idx.end(), pos.begin(), pos.end());
  return load_checked(b, src, idx, pos, spatial, fill);
}

// The element of window position `w` for output position `o`, or the reduction's neutral
// fill (-inf for max, 0 for sums) where the window hangs over the padding. `masked` false:
// every window lies inside `src` (padded_input), so there is nothing to test.
WindowFn window_loader(const TensorBoxPtr& src, const PoolGeometry& g,
                       const std::vector<int64_t>& spatial, bool is_max, bool masked = true) {
  const size_t k = spatial.size();
  if (!masked)
    return [src, g, k](KernelBuilder& b, const std::vector<Index>& o, const std::vector<Index>& w) {
      std::vector<Index> idx{o[0], o[1]};
      for (size_t d = 0; d < k; ++d)
        idx.push_back(ix_add(ix_mul(o[2 + d], g.strides[d]), ix_mul(w[d], g.dilations[d])));
      return src->load(b, idx);
    };
  const double fill = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
  return [src, g, k, spatial, fill](KernelBuilder& b, const std::vector<Index>& o,
                                    const std::vector<Index>& w) {
    std::vector<Index> pos;
    for (size_t d = 0; d < k; ++d)
      pos.push_back(ix_add(ix_add(ix_mul(o[2 + d], g.strides[d]), ix_mul(w[d], g.dilations[d])),
                           ix_const(-g.pad_begin[d])));
    return load_inside(b, src, o[0], o[1], pos, spatial, fill);
  };
}

// MaxPool's Indices: the first maximum of each window (ArgMax over the window positions),
// as a flat position in the input: (n * C + c) * prod(spatial) plus the spatial position,
// row-major (storage_order 0) or with the first spatial dim fastest (storage_order 1).
TensorBoxPtr max_pool_indices(const LowerCtx& c, const TensorBoxPtr& x, const PoolGeometry& g,
                              const std::vector<int64_t>& spatial) {
  const int64_t order = c.node.attr_int("storage_order", 0);
  if (order != 0 && order != 1) c.error("storage_order must be 0 or 1, got ", order);
  const size_t k = spatial.size();
  auto def = std::make_shared<ComputedDef>();
  def->is_reduction = true;
  def->reduce = ReduceKind::ArgMax;
  def->origin = c.origin();
  def->ranges = {x->size[0], x->size[1]};
  def->ranges.insert(def->ranges.end(), g.out.begin(), g.out.end());
  def->reduction_ranges = g.kernel;
  def->rfn = window_loader(x, g, spatial, true);
  const int64_t channels = x->size[1];
  def->post = [g, k, spatial, channels, order](KernelBuilder& b, V wl) {
    auto i64 = [&](int64_t v) { return b.constant(ScalarType::I64, static_cast<double>(v)); };
    // Window position d of the row-major linear window index, then the input position.
    std::vector<V> pos(k);
    int64_t inner = 1;
    for (size_t d = k; d-- > 0;) {
      V w = b.binary(Op::Mod, b.binary(Op::Div, wl, i64(inner)), i64(g.kernel[d]));
      inner *= g.kernel[d];
      Index start =
          ix_add(ix_mul(ix_var(static_cast<int>(2 + d)), g.strides[d]), ix_const(-g.pad_begin[d]));
      pos[d] = b.binary(Op::Add, b.index_value(start), b.binary(Op::Mul, w, i64(g.dilations[d])));
    }
    V plane = b.binary(Op::Add, b.binary(Op::Mul, b.loop_var(0), i64(channels)), b.loop_var(1));
    V flat = i64(0);
    int64_t stride = 1;
    for (size_t i = 0; i < k; ++i) {
      const size_t d = order == 0 ? k - 1 - i : i;
      flat = b.binary(Op::Add, flat, b.binary(Op::Mul, pos[d], i64(stride)));
      stride *= spatial[d];
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

// The padding every window needs past the end of spatial dim d (at least pad_end; more
// with ceil_mode, whose last window may hang further out).
int64_t end_padding(const PoolGeometry& g, const std::vector<int64_t>& spatial, size_t d) {
  const int64_t span = (g.kernel[d] - 1) * g.dilations[d] + 1;
  const int64_t last = (g.out[d] - 1) * g.strides[d] + span - g.pad_begin[d];
  return std::max(g.pad_end[d], last - spatial[d]);
}

// x padded with `fill` (the pool's neutral value) on every side a window reaches out of it,
// realized (in the dim order `var` gives, as the pool's output) so that the pool reads
// every window without masks: the bounds are tested once per input element instead of once
// per window element (9 times for a 3x3 window), which dominated resnet18's MaxPool on
// the portable backend. Null when no window leaves x.
TensorBoxPtr padded_input(LowerCtx& c, const TensorBoxPtr& x, const PoolGeometry& g,
                          const std::vector<int64_t>& spatial, double fill,
                          const std::vector<int>& var) {
  const size_t k = spatial.size();
  std::vector<int64_t> size{x->size[0], x->size[1]};
  bool any = false;
  for (size_t d = 0; d < k; ++d) {
    const int64_t after = end_padding(g, spatial, d);
    any = any || g.pad_begin[d] > 0 || after > 0;
    size.push_back(g.pad_begin[d] + spatial[d] + std::max<int64_t>(after, 0));
  }
  if (!any) return nullptr;
  Loader fn = [x, g, k, spatial, fill](KernelBuilder& b, const std::vector<Index>& i) {
    std::vector<Index> pos;
    for (size_t d = 0; d < k; ++d) pos.push_back(ix_add(i[2 + d], ix_const(-g.pad_begin[d])));
    return load_inside(b, x, i[0], i[1], pos, spatial, fill);
  };
  return realized_in_order(c, x->dtype, size, fn, var);
}

// How many points of the window at output position `out` (per spatial dim) AveragePool
// divides by: those inside x, or with count_include_pad those inside x and its pads
// (windows of ceil_mode may hang out past both). At least 1.
V window_count(KernelBuilder& b, const PoolGeometry& g, const std::vector<int64_t>& spatial,
               bool include_pad, const std::vector<Index>& out) {
  V count = b.constant(ScalarType::I64, 1);
  for (size_t d = 0; d < spatial.size(); ++d) {
    const int64_t lo = include_pad ? -g.pad_begin[d] : 0;
    const int64_t hi = include_pad ? spatial[d] + g.pad_end[d] : spatial[d];
    const int64_t dil = g.dilations[d];
    const Index start = ix_add(ix_mul(out[d], g.strides[d]), ix_const(-g.pad_begin[d]));
    // window offsets j with lo <= start + j*dil < hi: j in [ceil((lo-start)/dil),
    // ceil((hi-start)/dil))
    auto ceil_div = [&](int64_t bound) {
      const Index num = ix_add(ix_const(bound + dil - 1), ix_mul(start, -1));
      return b.index_value(ix_floordiv(num, dil));
    };
    const V jmin = b.binary(Op::Max, ceil_div(lo), b.constant(ScalarType::I64, 0));
    const V jmax = b.binary(Op::Min, ceil_div(hi),
                            b.constant(ScalarType::I64, static_cast<double>(g.kernel[d])));
    const V n = b.binary(Op::Max, b.binary(Op::Sub, jmax, jmin), b.constant(ScalarType::I64, 0));
    count = b.binary(Op::Mul, count, n);
  }
  return b.binary(Op::Max, count, b.constant(ScalarType::I64, 1));
}

// A pool of small windows (kMaxUnrolledWindow points at most) as a pointwise kernel: the
// maximum (or the sum, divided by window_count) of the window's loads, in window order,
// each masked (read as -inf, or 0) only along the dims where its offset reaches out of x
// for some output. Neither a padded copy of x nor a reduction loop: a masked dim's bounds
// are tested once per output point (row) rather than once per window point, and the copy no
// longer streams x through memory twice (resnet18's 3x3/2 MaxPool over 64 x 112 x 112 took
// 0.32 ms to copy and 0.25 ms to reduce on the JIT, 0.35 ms in all now).
constexpr int64_t kMaxUnrolledWindow = 16;

bool unrolled_window(const PoolGeometry& g) {
  int64_t points = 1;
  for (int64_t k : g.kernel) points *= k;
  return points <= kMaxUnrolledWindow;
}

// The pool's output in logical [N, C, out...] order, stored in `var` order (see lower_pool).
TensorBoxPtr unrolled_pool(LowerCtx& c, const TensorBoxPtr& x, const PoolGeometry& g,
                           const std::vector<int64_t>& spatial, const std::vector<int>& var,
                           bool is_max, bool include_pad) {
  const size_t k = spatial.size();
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
  const double fill = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
  Loader fn = [x, g, k, spatial, offsets, fill, is_max, include_pad](KernelBuilder& b,
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
        if (shift < 0 || last >= spatial[d]) {
          masked_pos.push_back(p);
          masked_size.push_back(spatial[d]);
        }
      }
      const V v = load_checked(b, x, idx, masked_pos, masked_size, fill);
      acc = acc.id < 0 ? v : b.binary(is_max ? Op::Max : Op::Add, acc, v);
    }
    if (is_max) return acc;
    const std::vector<Index> out(o.begin() + 2, o.end());
    return b.binary(Op::Div, acc, b.cast(window_count(b, g, spatial, include_pad, out), acc.type));
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

std::vector<TensorBoxPtr> lower_pool(LowerCtx& c, bool is_max) {
  const TensorBoxPtr& x = c.input(0);
  if (!dtype_is_float(x->dtype)) c.unsupported("non-float input");
  if (x->size.size() < 3) c.error("input must have rank >= 3");
  std::vector<int64_t> spatial(x->size.begin() + 2, x->size.end());
  PoolGeometry g = pool_geometry(c, spatial);
  size_t k = spatial.size();
  bool include_pad = c.node.attr_int("count_include_pad", 0) != 0;
  // var[d]: the loop (and stored) dim of output dim d: [N, C, spatial...] in order, or
  // channels-last [N, spatial..., C].
  std::vector<int> var(k + 2);
  for (size_t d = 0; d < k + 2; ++d) var[d] = static_cast<int>(d);
  const bool last = stored_channels_last(x);
  if (last) {
    var[1] = static_cast<int>(k + 1);
    for (size_t d = 0; d < k; ++d) var[2 + d] = static_cast<int>(1 + d);
  }
  if (unrolled_window(g)) {
    TensorBoxPtr t = unrolled_pool(c, x, g, spatial, var, is_max, include_pad);
    if (!is_max || c.node.outputs.size() < 2 || !c.node.outputs[1]) return {t};
    return {t, max_pool_indices(c, x, g, spatial)};
  }
  std::vector<int64_t> out_size{x->size[0], x->size[1]};
  out_size.insert(out_size.end(), g.out.begin(), g.out.end());
  auto def = std::make_shared<ComputedDef>();
  def->is_reduction = true;
  def->reduce = is_max ? ReduceKind::Max : ReduceKind::Sum;
  def->origin = c.origin();
  def->ranges.resize(k + 2);
  for (size_t d = 0; d < k + 2; ++d) def->ranges[static_cast<size_t>(var[d])] = out_size[d];
  def->reduction_ranges = g.kernel;
  const double fill = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
  const TensorBoxPtr padded = padded_input(c, x, g, spatial, fill, var);
  // Without a padded copy no window leaves x: neither needs masks.
  WindowFn window = window_loader(padded ? padded : x, g, spatial, is_max, false);
  def->rfn = [window, var](KernelBuilder& b, const std::vector<Index>& o,
                           const std::vector<Index>& w) {
    std::vector<Index> nc_order;
    for (int v : var) nc_order.push_back(o[static_cast<size_t>(v)]);
    return window(b, nc_order, w);
  };
  if (!is_max) {
    def->post = [g, k, spatial, include_pad, var](KernelBuilder& b, V sum) {
      std::vector<Index> out;
      for (size_t d = 0; d < k; ++d) out.push_back(ix_var(var[2 + d]));
      return b.binary(Op::Div, sum,
                      b.cast(window_count(b, g, spatial, include_pad, out), sum.type));
    };
  }
  TensorBoxPtr t = make_reduction_box(x->dtype, def);
  c.gl.realize(t);
  if (last) t = permute_view(t, var);
  // An Indices output nobody reads is dropped with the other dead steps (emit_plan).
  if (!is_max || c.node.outputs.size() < 2 || !c.node.outputs[1]) return {t};
  return {t, max_pool_indices(c, x, g, spatial)};
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
  t.add("GlobalMaxPool", [](LowerCtx& c) { return lower_global_pool(c, true); });
  t.add("GlobalAveragePool", [](LowerCtx& c) { return lower_global_pool(c, false); });
}

}  // namespace ferrite
