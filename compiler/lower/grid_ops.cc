// Sampling grids: AffineGrid (20) makes one from affine matrices, GridSample (16, 20)
// samples an image at one. Both are pointwise over their output: a GridSample point loads
// its grid coordinates, maps them to pixel space, and sums its taps (1 nearest, 2^k linear,
// 4^k cubic over k spatial dims), each tap's pixel read under the padding rule. As the
// operators' reference (and PyTorch's grid_sampler): coordinates outside the image are
// first clamped (border) or reflected (reflection), then each tap is fetched as zero
// (zeros), from the nearest edge pixel (border) or from its reflection (reflection).
#include <cmath>

#include "compiler/loopir/checked_int.h"
#include "compiler/lower/lowering.h"

namespace ferrite {
namespace {

// A spatial dim i's coordinate -1..1 in pixel units, and the interval [lo, hi] the
// padding rules keep it in.
struct Axis {
  int64_t size = 1;
  double lo = 0, hi = 0;
};

Axis axis_of(int64_t size, bool align_corners) {
  Axis a;
  a.size = size;
  a.lo = align_corners ? 0.0 : -0.5;
  a.hi = align_corners ? static_cast<double>(size) - 1 : static_cast<double>(size) - 0.5;
  return a;
}

V f32(KernelBuilder& b, double v) {
  return b.constant(ScalarType::F32, v);
}

// x reflected into [lo, hi] by its nearer border, as many times as it takes.
V reflect(KernelBuilder& b, V x, const Axis& a) {
  const double range = a.hi - a.lo;
  if (range <= 0) return f32(b, a.lo);
  const V lo = f32(b, a.lo), hi = f32(b, a.hi);
  const V below = b.binary(Op::Lt, x, lo), above = b.binary(Op::Gt, x, hi);
  const V dx =
      b.where(below, b.binary(Op::Sub, lo, x), b.where(above, b.binary(Op::Sub, x, hi), f32(b, 0)));
  const V n = b.unary(Op::Floor, b.binary(Op::Div, dx, f32(b, range)));
  const V r = b.binary(Op::Sub, dx, b.binary(Op::Mul, n, f32(b, range)));
  const V half = b.unary(Op::Floor, b.binary(Op::Mul, n, f32(b, 0.5)));
  const V even = b.binary(Op::Eq, b.binary(Op::Mul, half, f32(b, 2)), n);
  const V lo_r = b.binary(Op::Add, lo, r), hi_r = b.binary(Op::Sub, hi, r);
  return b.where(below, b.where(even, lo_r, hi_r), b.where(above, b.where(even, hi_r, lo_r), x));
}

enum class Padding { Zeros, Border, Reflection };

// Keys' cubic convolution weights (alpha = -0.75) of the four taps around t in [0, 1).
void cubic_weights(KernelBuilder& b, V t, V w[4]) {
  const double A = -0.75;
  auto poly_outer = [&](V s) {  // s in [1, 2]: ((A s - 5A) s + 8A) s - 4A
    V p = b.binary(Op::Sub, b.binary(Op::Mul, f32(b, A), s), f32(b, 5 * A));
    p = b.binary(Op::Add, b.binary(Op::Mul, p, s), f32(b, 8 * A));
    return b.binary(Op::Sub, b.binary(Op::Mul, p, s), f32(b, 4 * A));
  };
  auto poly_inner = [&](V s) {  // s in [0, 1]: ((A + 2) s - (A + 3)) s s + 1
    V p = b.binary(Op::Sub, b.binary(Op::Mul, f32(b, A + 2), s), f32(b, A + 3));
    return b.binary(Op::Add, b.binary(Op::Mul, b.binary(Op::Mul, p, s), s), f32(b, 1));
  };
  const V one = f32(b, 1), two = f32(b, 2);
  w[0] = poly_outer(b.binary(Op::Add, t, one));
  w[1] = poly_inner(t);
  w[2] = poly_inner(b.binary(Op::Sub, one, t));
  w[3] = poly_outer(b.binary(Op::Sub, two, t));
}

enum class Mode { Nearest, Linear, Cubic };

// One output point of GridSample: its coordinates, taps and their sum.
struct Sampler {
  TensorBoxPtr x, grid;
  size_t k = 0;
  Mode mode = Mode::Linear;
  Padding pad = Padding::Zeros;
  bool align = false;
  int per_dim = 2;  // taps per spatial dim
  int64_t taps = 1;
  std::vector<Axis> axes;

  // Spatial dim i's pixel-space coordinate (the grid lists the dims last one first),
  // rounded (nearest) and brought inside by the padding rule.
  V coordinate(KernelBuilder& b, const std::vector<Index>& idx, size_t i) const {
    std::vector<Index> gi(idx.begin() + 2, idx.end());
    gi.insert(gi.begin(), idx[0]);
    gi.push_back(ix_const(static_cast<int64_t>(k - 1 - i)));
    const V g1 = b.binary(Op::Add, b.cast(grid->load(b, gi), ScalarType::F32), f32(b, 1));
    const double n = static_cast<double>(axes[i].size);
    V p = align ? b.binary(Op::Mul, g1, f32(b, (n - 1) / 2))
                : b.binary(Op::Mul, b.binary(Op::Sub, b.binary(Op::Mul, g1, f32(b, n)), f32(b, 1)),
                           f32(b, 0.5));
    if (mode == Mode::Nearest) p = b.unary(Op::Round, p);  // half to even, in every rank
    if (pad == Padding::Border) {  // only outside [lo, hi]: inside, the taps clamp
      const V out = b.binary(Op::Or, b.binary(Op::Lt, p, f32(b, axes[i].lo)),
                             b.binary(Op::Gt, p, f32(b, axes[i].hi)));
      p = b.where(out, b.binary(Op::Min, b.binary(Op::Max, p, f32(b, 0)), f32(b, n - 1)), p);
    } else if (pad == Padding::Reflection) {
      p = reflect(b, p, axes[i]);
    }
    return p;
  }

  // Dim i's taps around coordinate p: pixel indices and weights.
  void dim_taps(KernelBuilder& b, V p, std::vector<V>* index, std::vector<V>* weight) const {
    if (mode == Mode::Nearest) {
      *index = {b.cast(p, ScalarType::I64)};
      *weight = {f32(b, 1)};
      return;
    }
    const V base = b.unary(Op::Floor, p);
    const V t = b.binary(Op::Sub, p, base);
    const V base_i = b.cast(base, ScalarType::I64);
    const int64_t first = mode == Mode::Linear ? 0 : -1;
    for (int j = 0; j < per_dim; ++j) {
      index->push_back(b.binary(Op::Add, base_i, b.constant_i64(first + j)));
    }
    if (mode == Mode::Linear) {
      *weight = {b.binary(Op::Sub, f32(b, 1), t), t};
    } else {
      V w[4];
      cubic_weights(b, t, w);
      *weight = {w[0], w[1], w[2], w[3]};
    }
  }

  // Pixel index pi of dim i under the padding rule; `inside` collects the zeros rule.
  V fetch_index(KernelBuilder& b, V pi, size_t i, V* inside) const {
    const V last = b.constant_i64(axes[i].size - 1), zero = b.constant_i64(0);
    if (pad == Padding::Zeros) {
      *inside = b.binary(Op::And, *inside, b.binary(Op::Ge, pi, zero));
      *inside = b.binary(Op::And, *inside, b.binary(Op::Le, pi, last));
      return pi;
    }
    if (pad == Padding::Reflection) {
      pi = b.cast(reflect(b, b.cast(pi, ScalarType::F32), axes[i]), ScalarType::I64);
    }
    return b.binary(Op::Min, b.binary(Op::Max, pi, zero), last);
  }

  V operator()(KernelBuilder& b, const std::vector<Index>& idx) const {
    std::vector<std::vector<V>> index(k), weight(k);
    for (size_t i = 0; i < k; ++i) dim_taps(b, coordinate(b, idx, i), &index[i], &weight[i]);
    const ScalarType vt = compute_type(x->dtype);
    V sum = b.constant(vt, 0);
    for (int64_t tap = 0; tap < taps; ++tap) {
      std::vector<Index> at{idx[0], idx[1]};
      V inside = b.constant(ScalarType::Bool, 1), w = f32(b, 1);
      int64_t rest = tap;
      for (size_t i = 0; i < k; ++i) {
        const size_t j = static_cast<size_t>(rest % per_dim);
        rest /= per_dim;
        at.push_back(ix_value(fetch_index(b, index[i][j], i, &inside).id));
        w = b.binary(Op::Mul, w, weight[i][j]);
      }
      V v;
      if (pad == Padding::Zeros) {
        {
          MaskScope scope(b, inside);
          v = x->load(b, at);
        }
        v = b.where(inside, v, b.constant(vt, 0));
      } else {
        v = x->load(b, at);
      }
      sum = b.binary(Op::Add, sum, b.binary(Op::Mul, b.cast(w, vt), v));
    }
    return sum;
  }
};

std::vector<TensorBoxPtr> lower_grid_sample(LowerCtx& c) {
  Sampler s;
  s.x = c.input(0);
  s.grid = c.input(1);
  const TensorBoxPtr &x = s.x, &grid = s.grid;
  if (!dtype_is_float(x->dtype) || !dtype_is_float(grid->dtype)) {
    c.unsupported("non-float input");
  }
  const size_t r = x->size.size();
  if (r < 3) c.error("X must have rank >= 3, got ", r);
  s.k = r - 2;
  if (c.opset < 20 && s.k != 2) c.error("X must be 4-D before opset 20");
  if (grid->size.size() != r || grid->size[0] != x->size[0] ||
      grid->size[r - 1] != static_cast<int64_t>(s.k)) {
    c.error("grid must be [N, ", s.k, " spatial dims..., ", s.k, "], got ",
            TensorType{grid->dtype, grid->size, {}, true}.to_string());
  }
  const std::string mode = c.node.attr_string("mode", c.opset >= 20 ? "linear" : "bilinear");
  if (mode == "nearest") {
    s.mode = Mode::Nearest;
  } else if (mode == "linear" || mode == "bilinear") {
    s.mode = Mode::Linear;
  } else if (mode == "cubic" || mode == "bicubic") {
    s.mode = Mode::Cubic;
  } else {
    c.error("mode '", mode, "'");
  }
  const std::string pad_name = c.node.attr_string("padding_mode", "zeros");
  if (pad_name == "border") {
    s.pad = Padding::Border;
  } else if (pad_name == "reflection") {
    s.pad = Padding::Reflection;
  } else if (pad_name != "zeros") {
    c.error("padding_mode '", pad_name, "'");
  }
  s.align = c.node.attr_int("align_corners", 0) != 0;
  s.per_dim = s.mode == Mode::Nearest ? 1 : s.mode == Mode::Linear ? 2 : 4;
  for (size_t i = 0; i < s.k; ++i) {
    s.taps *= s.per_dim;
    if (s.taps > 256) c.unsupported(s.k, " spatial dims of ", mode, " sampling");
    s.axes.push_back(axis_of(x->size[2 + i], s.align));
  }
  std::vector<int64_t> out{x->size[0], x->size[1]};
  out.insert(out.end(), grid->size.begin() + 1, grid->size.end() - 1);
  return {make_pointwise_box(x->dtype, out, s, c.origin())};
}

// AffineGrid (20): grid[n, spatial..., i] = theta[n, i, :] . (x, y[, z], 1), the base
// coordinates spanning -1..1 over each spatial dim of `size` (pixel centres, or corners
// when align_corners).
std::vector<TensorBoxPtr> lower_affine_grid(LowerCtx& c) {
  const TensorBoxPtr& theta = c.input(0);
  if (!dtype_is_float(theta->dtype)) c.unsupported("non-float theta");
  const std::vector<int64_t> size = const_ints_1d(c, 1);
  if (size.size() != 4 && size.size() != 5) c.error("size must have 4 or 5 entries");
  const size_t k = size.size() - 2;
  if (theta->size != std::vector<int64_t>{size[0], int64_t(k), int64_t(k) + 1}) {
    c.error("theta must be [", size[0], ", ", k, ", ", k + 1, "], got ",
            TensorType{theta->dtype, theta->size, {}, true}.to_string());
  }
  for (int64_t s : size) {
    if (s <= 0 || s > kMaxShapeElements) c.error("size entries must be positive, got ", s);
  }
  const bool align = c.node.attr_int("align_corners", 0) != 0;
  std::vector<int64_t> out{size[0]};
  out.insert(out.end(), size.begin() + 2, size.end());
  out.push_back(static_cast<int64_t>(k));
  Loader fn = [=](KernelBuilder& b, const std::vector<Index>& idx) {
    const ScalarType t = compute_type(theta->dtype);
    const Index& row = idx[k + 1];
    V sum = theta->load(b, {idx[0], row, ix_const(static_cast<int64_t>(k))});
    for (size_t j = 0; j < k; ++j) {  // base coordinate j is spatial dim k - 1 - j
      const size_t d = k - 1 - j;
      const double n = static_cast<double>(size[2 + d]);
      const V pos = b.cast(b.index_value(idx[1 + d]), t);
      V base;
      if (align) {
        base = n > 1 ? b.binary(Op::Sub, b.binary(Op::Mul, pos, b.constant(t, 2 / (n - 1))),
                                b.constant(t, 1))
                     : b.constant(t, -1);
      } else {
        base = b.binary(
            Op::Sub,
            b.binary(Op::Mul, b.binary(Op::Add, pos, b.constant(t, 0.5)), b.constant(t, 2 / n)),
            b.constant(t, 1));
      }
      const V th = theta->load(b, {idx[0], row, ix_const(static_cast<int64_t>(j))});
      sum = b.binary(Op::Add, sum, b.binary(Op::Mul, th, base));
    }
    return sum;
  };
  return {make_pointwise_box(theta->dtype, out, fn, c.origin())};
}

}  // namespace

void register_grid_ops(LoweringTable& t) {
  t.add("GridSample", lower_grid_sample);
  t.add("AffineGrid", lower_affine_grid);
}

}  // namespace ferrite
