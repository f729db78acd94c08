// Sampling grids: AffineGrid (20) makes one from affine matrices, GridSample (16, 20)
// samples an image at one. Both are pointwise over their output: a GridSample point loads
// its grid coordinates, maps them to pixel space, and sums its taps (1 nearest, 2^k linear,
// 4^k cubic over k spatial dims), each tap's pixel read under the padding rule. As the
// operators' reference (and PyTorch's grid_sampler): coordinates outside the image are
// first clamped (border) or reflected (reflection), then each tap is fetched as zero
// (zeros), from the nearest edge pixel (border) or from its reflection (reflection).
// RoiAlign (10, 16, 22) samples a grid of bilinear points in each bin of each region: a
// reduction over the grid, as onnxruntime computes it (below).
#include <algorithm>
#include <cmath>
#include <limits>

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

// RoiAlign: Y[r, c, ph, pw] over the bin (ph, pw) of region r (x1, y1, x2, y2 scaled by
// spatial_scale, less 0.5 with half_pixel; output_half_pixel, the legacy mode, makes the
// region at least 1 x 1), from gh x gw samples at the centres of the bin's sub-cells
// (sampling_ratio, or ceil(region size / output size) when 0). Each sample interpolates
// the four pixels around it (onnxruntime's rules: a sample more than one pixel outside
// contributes 0, coordinates clamp at 0, the last row and column repeat); avg sums them and
// divides by gh * gw; max takes the largest weighted tap of any sample (onnxruntime's and
// the ONNX reference's rule, not the largest interpolated value).
// One output point of RoiAlign, as a reduction over its bin's gh x gw samples.
struct RoiSampler {
  TensorBoxPtr x, rois, batch;
  int64_t oh = 1, ow = 1, ratio = 0, gh = 1, gw = 1;
  bool is_max = false, half_pixel = false;
  float scale = 1, offset = 0;
  std::string msg;  // names batch_indices in a run-time index error

  // The region's start and size along rois axis `axis` (0: x, 1: y), in float32.
  void region(KernelBuilder& b, const Index& r, int axis, V* start, V* size) const {
    const V lo = b.cast(rois->load(b, {r, ix_const(axis)}), ScalarType::F32);
    const V hi = b.cast(rois->load(b, {r, ix_const(axis + 2)}), ScalarType::F32);
    const V sc = b.constant(ScalarType::F32, scale), off = b.constant(ScalarType::F32, offset);
    *start = b.binary(Op::Sub, b.binary(Op::Mul, lo, sc), off);
    *size = b.binary(Op::Sub, b.binary(Op::Sub, b.binary(Op::Mul, hi, sc), off), *start);
    if (!half_pixel) *size = b.binary(Op::Max, *size, b.constant(ScalarType::F32, 1));
  }

  // The grid's extent for sampling_ratio 0: the largest ceil(size / out) of any region,
  // from rois' values at compile time (the engine asks for them).
  void adaptive_grid(const LowerCtx& c) {
    const auto d = c.const_data(1);
    gh = gw = 1;
    for (int64_t r = 0; r < rois->size[0]; ++r) {
      float size[2];
      for (int axis = 0; axis < 2; ++axis) {
        const float lo = static_cast<float>(d->float_at(r * 4 + axis)) * scale - offset;
        size[axis] = static_cast<float>(d->float_at(r * 4 + axis + 2)) * scale - offset - lo;
        if (!half_pixel) size[axis] = std::max(size[axis], 1.0f);
      }
      const float cells_y = std::ceil(size[1] / static_cast<float>(oh));
      const float cells_x = std::ceil(size[0] / static_cast<float>(ow));
      if (!(cells_y >= 1 && cells_x >= 1 && cells_y <= 4096 && cells_x <= 4096))
        c.error("region ", r, " has a sampling grid of ", cells_y, " x ", cells_x, " (1..4096)");
      gh = std::max(gh, static_cast<int64_t>(cells_y));
      gw = std::max(gw, static_cast<int64_t>(cells_x));
    }
  }

  // Sample g of output point o = (r, c, ph, pw): its weighted taps, summed (avg) or their
  // largest (max); outside its region's own grid, the reduction's identity.
  V operator()(KernelBuilder& b, const std::vector<Index>& o, const std::vector<Index>& g) const {
    const V f0 = b.constant(ScalarType::F32, 0), f1 = b.constant(ScalarType::F32, 1);
    const V bi = b.check_index(b.cast(batch->load(b, {o[0]}), ScalarType::I64), x->size[0], msg);
    // valid: the sample lies within a pixel of the image (else its taps weigh 0).
    V valid = b.constant(ScalarType::Bool, 1), in_grid = valid;
    V count = f1;
    V pos[2];  // y, x of the sample
    const int64_t outs[2] = {oh, ow}, fixed[2] = {gh, gw}, extent[2] = {x->size[2], x->size[3]};
    for (int d = 0; d < 2; ++d) {  // d 0: y (rois axis 1), 1: x (rois axis 0)
      V start, size;
      region(b, o[0], 1 - d, &start, &size);
      const V bin = b.binary(Op::Div, size, b.constant(ScalarType::F32, double(outs[d])));
      const V gi = b.cast(b.index_value(g[d]), ScalarType::F32);
      V cells = b.constant(ScalarType::F32, double(fixed[d]));
      if (ratio == 0) {
        cells = b.unary(Op::Ceil, bin);  // ceil(size / out)
        in_grid = b.binary(Op::And, in_grid, b.binary(Op::Lt, gi, cells));
      }
      count = b.binary(Op::Mul, count, cells);
      const V cell = b.cast(b.index_value(o[2 + d]), ScalarType::F32);
      const V sub = b.binary(Op::Add, gi, b.constant(ScalarType::F32, 0.5));
      pos[d] = b.binary(Op::Add, b.binary(Op::Add, start, b.binary(Op::Mul, cell, bin)),
                        b.binary(Op::Div, b.binary(Op::Mul, sub, bin), cells));
      const V lim = b.constant(ScalarType::F32, double(extent[d]));
      valid = b.binary(Op::And, valid, b.binary(Op::Ge, pos[d], b.constant(ScalarType::F32, -1)));
      valid = b.binary(Op::And, valid, b.binary(Op::Le, pos[d], lim));
    }
    // Taps: per axis the low and high pixel and their weights (high = low at the last).
    V lo_i[2], hi_i[2], w_lo[2], w_hi[2];
    for (int d = 0; d < 2; ++d) {
      const V p = b.binary(Op::Max, pos[d], f0);
      const V last = b.constant(ScalarType::F32, double(extent[d] - 1));
      const V at_end = b.binary(Op::Ge, b.unary(Op::Floor, p), last);
      const V low = b.where(at_end, last, b.unary(Op::Floor, p));
      const V frac = b.where(at_end, f0, b.binary(Op::Sub, p, low));
      lo_i[d] = b.cast(low, ScalarType::I64);
      hi_i[d] = b.where(at_end, lo_i[d], b.binary(Op::Add, lo_i[d], b.constant_i64(1)));
      w_lo[d] = b.binary(Op::Sub, f1, frac);
      w_hi[d] = frac;
    }
    const ScalarType vt = compute_type(x->dtype);
    V result;
    for (int tap = 0; tap < 4; ++tap) {
      const int ty = tap >> 1, tx = tap & 1;
      const V iy = ty ? hi_i[0] : lo_i[0], ix = tx ? hi_i[1] : lo_i[1];
      const V w =
          b.where(valid, b.binary(Op::Mul, ty ? w_hi[0] : w_lo[0], tx ? w_hi[1] : w_lo[1]), f0);
      V v;
      {
        MaskScope scope(b, valid);
        v = x->load(b, {ix_value(bi.id), o[1], ix_value(iy.id), ix_value(ix.id)});
      }
      const V term = b.binary(Op::Mul, b.cast(w, vt), b.where(valid, v, b.constant(vt, 0)));
      result = tap == 0 ? term : b.binary(is_max ? Op::Max : Op::Add, result, term);
    }
    if (ratio > 0) return result;
    if (!is_max) result = b.binary(Op::Div, result, b.cast(count, vt));
    const double none = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
    return b.where(in_grid, result, b.constant(vt, none));
  }
};

std::vector<TensorBoxPtr> lower_roi_align(LowerCtx& c) {
  RoiSampler s;
  s.x = c.input(0);
  s.rois = c.input(1);
  s.batch = c.input(2);
  const TensorBoxPtr &x = s.x, &rois = s.rois, &batch = s.batch;
  if (!dtype_is_float(x->dtype) || !dtype_is_float(rois->dtype)) c.unsupported("non-float input");
  if (x->size.size() != 4) c.error("X must be 4-D, got rank ", x->size.size());
  if (rois->size.size() != 2 || rois->size[1] != 4) c.error("rois must be [num_rois, 4]");
  if (batch->size.size() != 1 || batch->size[0] != rois->size[0])
    c.error("batch_indices must be [num_rois] (", rois->size[0], ")");
  if (batch->dtype != DType::I64 && batch->dtype != DType::I32)
    c.error("batch_indices must be integers, got ", dtype_name(batch->dtype));
  s.oh = c.node.attr_int("output_height", 1);
  s.ow = c.node.attr_int("output_width", 1);
  s.ratio = c.node.attr_int("sampling_ratio", 0);
  if (s.oh <= 0 || s.ow <= 0 || s.oh > kMaxShapeElements || s.ow > kMaxShapeElements)
    c.error("output_height and output_width must be positive");
  if (s.ratio < 0 || s.ratio > 64) c.error("sampling_ratio must be in 0..64, got ", s.ratio);
  const std::string mode = c.node.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max") c.error("mode must be avg or max, got '", mode, "'");
  s.is_max = mode == "max";
  s.half_pixel =
      c.node.attr_string("coordinate_transformation_mode",
                         c.opset >= 16 ? "half_pixel" : "output_half_pixel") == "half_pixel";
  s.scale = static_cast<float>(c.node.attr_float("spatial_scale", 1.0));
  s.offset = s.half_pixel ? 0.5f : 0.0f;
  s.msg = c.origin() + ": batch_indices";
  s.gh = s.gw = s.ratio;
  if (s.ratio == 0) s.adaptive_grid(c);
  auto def = std::make_shared<ComputedDef>();
  def->is_reduction = true;
  def->reduce = s.is_max ? ReduceKind::Max : ReduceKind::Sum;
  def->origin = c.origin();
  def->ranges = {rois->size[0], x->size[1], s.oh, s.ow};
  def->reduction_ranges = {s.gh, s.gw};
  def->rfn = s;
  if (!s.is_max && s.ratio > 0) {  // avg over the fixed grid: the sum, then one division
    const double cells = static_cast<double>(s.gh * s.gw);
    def->post = [cells](KernelBuilder& b, V sum) {
      return b.binary(Op::Div, sum, b.constant(sum.type, cells));
    };
  }
  return {make_reduction_box(x->dtype, def)};
}

}  // namespace

void register_grid_ops(LoweringTable& t) {
  t.add("GridSample", lower_grid_sample);
  t.add("AffineGrid", lower_affine_grid);
  t.add("RoiAlign", lower_roi_align);
}

}  // namespace ferrite
