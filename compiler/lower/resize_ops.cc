// Resize and Upsample as pointwise gathers: each output coordinate maps back to a source
// coordinate (per coordinate_transformation_mode), and the value is the nearest element or
// a separable linear/cubic blend of neighbours, with indices clamped to the edge (as the
// ONNX reference pads by edge). Coordinates and weights are computed in f64.
#include <cmath>

#include "compiler/loopir/checked_int.h"
#include "compiler/lower/lowering.h"

namespace ferrite {
namespace {

struct ResizeSpec {
  std::string mode = "nearest";      // nearest | linear | cubic
  std::string coord = "half_pixel";  // coordinate_transformation_mode
  std::string nearest = "round_prefer_floor";
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0.0;
  std::vector<int64_t> in, out;
  std::vector<double> scale, roi_start, roi_end;
};

// Source coordinate of output coordinate x along dim d.
V source_coord(KernelBuilder& b, const ResizeSpec& s, size_t d, V x) {
  auto f = [&](double v) { return b.constant(ScalarType::F64, v); };
  // The ONNX reference uses the unrounded resized length in * scale.
  double in = static_cast<double>(s.in[d]), sc = s.scale[d], out = in * sc;
  if (s.coord == "align_corners") {
    return out <= 1 ? f(0) : b.binary(Op::Mul, x, f((in - 1) / (out - 1)));
  }
  if (s.coord == "asymmetric") return b.binary(Op::Div, x, f(sc));
  if (s.coord == "tf_half_pixel_for_nn")
    return b.binary(Op::Div, b.binary(Op::Add, x, f(0.5)), f(sc));
  if (s.coord == "tf_crop_and_resize") {
    double st = s.roi_start[d], en = s.roi_end[d];
    if (out <= 1) return f(0.5 * (st + en) * (in - 1));
    return b.binary(Op::Add, f(st * (in - 1)),
                    b.binary(Op::Mul, x, f((en - st) * (in - 1) / (out - 1))));
  }
  V hp = b.binary(Op::Sub, b.binary(Op::Div, b.binary(Op::Add, x, f(0.5)), f(sc)), f(0.5));
  if (s.coord == "pytorch_half_pixel" && out <= 1) return f(0);
  return hp;
}

V clamp_index(KernelBuilder& b, V i, int64_t n) {
  V lo = b.constant(ScalarType::I64, 0), hi = b.constant_i64(n - 1);
  return b.binary(Op::Min, b.binary(Op::Max, i, lo), hi);
}

V nearest_index(KernelBuilder& b, const ResizeSpec& s, V xo) {
  auto f = [&](double v) { return b.constant(ScalarType::F64, v); };
  V r;
  if (s.nearest == "floor")
    r = b.unary(Op::Floor, xo);
  else if (s.nearest == "ceil")
    r = b.unary(Op::Ceil, xo);
  else if (s.nearest == "round_prefer_ceil")
    r = b.unary(Op::Floor, b.binary(Op::Add, xo, f(0.5)));
  else
    r = b.unary(Op::Ceil, b.binary(Op::Sub, xo, f(0.5)));  // round_prefer_floor
  return b.cast(r, ScalarType::I64);
}

// Weights of the taps floor(x)-1 .. floor(x)+2 for cubic, floor(x) .. floor(x)+1 for linear.
std::vector<V> tap_weights(KernelBuilder& b, const ResizeSpec& s, V r) {
  auto f = [&](double v) { return b.constant(ScalarType::F64, v); };
  auto mul = [&](V a, V c) { return b.binary(Op::Mul, a, c); };
  auto add = [&](V a, V c) { return b.binary(Op::Add, a, c); };
  auto sub = [&](V a, V c) { return b.binary(Op::Sub, a, c); };
  if (s.mode == "linear") return {sub(f(1), r), r};
  double A = s.cubic_a;
  // Keys' cubic convolution: near taps at distance t in [0,1], far taps at t in [1,2].
  auto near = [&](V t) { return add(mul(mul(sub(mul(f(A + 2), t), f(A + 3)), t), t), f(1)); };
  auto far = [&](V t) {
    return sub(mul(add(mul(sub(mul(f(A), t), f(5 * A)), t), f(8 * A)), t), f(4 * A));
  };
  V one_minus = sub(f(1), r);
  return {far(add(r, f(1))), near(r), near(one_minus), far(add(one_minus, f(1)))};
}

struct Tap {
  Index index;
  V weight;
};

// The taps of one dimension: (index, weight) pairs, weights normalised if excluding outside.
std::vector<Tap> dim_taps(KernelBuilder& b, const ResizeSpec& s, size_t d, const Index& out_idx,
                          V* outside) {
  if (s.in[d] == s.out[d] && s.scale[d] == 1.0 && s.coord != "tf_crop_and_resize") {
    return {{out_idx, b.constant(ScalarType::F64, 1)}};
  }
  V x = b.cast(b.index_value(out_idx), ScalarType::F64);
  V xo = source_coord(b, s, d, x);
  if (s.coord == "tf_crop_and_resize") {
    V lo = b.binary(Op::Lt, xo, b.constant(ScalarType::F64, 0));
    V hi = b.binary(Op::Gt, xo, b.constant(ScalarType::F64, static_cast<double>(s.in[d] - 1)));
    *outside = b.binary(Op::Or, *outside, b.binary(Op::Or, lo, hi));
  }
  if (s.mode == "nearest") {
    return {{ix_value(clamp_index(b, nearest_index(b, s, xo), s.in[d]).id),
             b.constant(ScalarType::F64, 1)}};
  }
  V fl = b.unary(Op::Floor, xo);
  V r = b.binary(Op::Sub, xo, fl);
  V base = b.cast(fl, ScalarType::I64);
  std::vector<V> w = tap_weights(b, s, r);
  int64_t first = s.mode == "cubic" ? -1 : 0;
  std::vector<Tap> taps;
  V total = b.constant(ScalarType::F64, 0);
  for (size_t t = 0; t < w.size(); ++t) {
    V pos = b.binary(Op::Add, base, b.constant_i64(first + static_cast<int64_t>(t)));
    V weight = w[t];
    if (s.exclude_outside) {
      V in_range = b.binary(Op::And, b.binary(Op::Ge, pos, b.constant(ScalarType::I64, 0)),
                            b.binary(Op::Le, pos, b.constant_i64(s.in[d] - 1)));
      weight = b.where(in_range, weight, b.constant(ScalarType::F64, 0));
    }
    total = b.binary(Op::Add, total, weight);
    taps.push_back({ix_value(clamp_index(b, pos, s.in[d]).id), weight});
  }
  if (s.exclude_outside) {
    for (auto& t : taps) t.weight = b.binary(Op::Div, t.weight, total);
  }
  return taps;
}

TensorBoxPtr resize(LowerCtx& c, const TensorBoxPtr& x, ResizeSpec s) {
  if (!dtype_is_float(x->dtype) && s.mode != "nearest")
    c.unsupported(s.mode, " resize of ", dtype_name(x->dtype));
  DType dt = x->dtype;
  Loader fn = [x, s, dt](KernelBuilder& b, const std::vector<Index>& idx) {
    V outside = b.constant(ScalarType::Bool, 0);
    std::vector<std::vector<Tap>> taps;
    for (size_t d = 0; d < idx.size(); ++d) taps.push_back(dim_taps(b, s, d, idx[d], &outside));
    V acc;
    std::vector<size_t> pick(idx.size(), 0);
    while (true) {
      std::vector<Index> at;
      V w = b.constant(ScalarType::F64, 1);
      for (size_t d = 0; d < idx.size(); ++d) {
        at.push_back(taps[d][pick[d]].index);
        w = b.binary(Op::Mul, w, taps[d][pick[d]].weight);
      }
      V term = b.binary(Op::Mul, w, b.cast(x->load(b, at), ScalarType::F64));
      acc = acc.id < 0 ? term : b.binary(Op::Add, acc, term);
      size_t d = idx.size();
      while (d > 0 && ++pick[d - 1] == taps[d - 1].size()) pick[--d] = 0;
      if (d == 0) break;
    }
    if (s.coord == "tf_crop_and_resize") {
      acc = b.where(outside, b.constant(ScalarType::F64, s.extrapolation), acc);
    }
    if (!dtype_is_float(dt)) return b.cast(acc, ScalarType::I64);
    return b.cast(acc, compute_type(dt));
  };
  return make_pointwise_box(dt, s.out, fn, c.origin());
}

std::vector<double> float_values(const LowerCtx& c, size_t i) {
  auto d = c.const_data(i);
  std::vector<double> v;
  for (int64_t k = 0; k < d->elements(); ++k) v.push_back(d->float_at(k));
  return v;
}

// Every output element reads some input element: an empty input dim stays empty.
void check_sizes(const LowerCtx& c, const ResizeSpec& s) {
  for (size_t d = 0; d < s.in.size(); ++d)
    if (s.in[d] == 0 && s.out[d] != 0)
      c.error("dim ", d, " is empty and cannot be resized to ", s.out[d]);
}

void set_output_size(const LowerCtx& c, ResizeSpec* s, const std::vector<double>& scales,
                     const std::vector<int64_t>& sizes) {
  size_t r = s->in.size();
  if (!sizes.empty()) {
    if (sizes.size() != r) c.error("sizes has ", sizes.size(), " entries for rank ", r);
    s->out = sizes;
    for (size_t d = 0; d < r; ++d) {
      if (sizes[d] < 0) c.error("negative size");
      s->scale.push_back(s->in[d] ? static_cast<double>(sizes[d]) / static_cast<double>(s->in[d])
                                  : 1.0);
    }
    check_sizes(c, *s);
    return;
  }
  if (scales.size() != r) c.error("scales has ", scales.size(), " entries for rank ", r);
  for (size_t d = 0; d < r; ++d) {
    if (!(scales[d] > 0)) c.error("scales must be positive");
    s->scale.push_back(scales[d]);
    s->out.push_back(
        checked_int(std::floor(static_cast<double>(s->in[d]) * scales[d]), "an output dim"));
  }
  check_sizes(c, *s);
}

std::vector<TensorBoxPtr> lower_resize(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  ResizeSpec s;
  s.in = x->size;
  s.mode = c.node.attr_string("mode", "nearest");
  if (s.mode != "nearest" && s.mode != "linear" && s.mode != "cubic")
    c.unsupported("mode '", s.mode, "'");
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  if (c.opset < 11) {
    s.coord = "asymmetric";
    s.nearest = "floor";
    scales = float_values(c, 1);
  } else {
    s.coord = c.node.attr_string("coordinate_transformation_mode", "half_pixel");
    s.nearest = c.node.attr_string("nearest_mode", "round_prefer_floor");
    s.cubic_a = c.node.attr_float("cubic_coeff_a", -0.75);
    s.exclude_outside = c.node.attr_int("exclude_outside", 0) != 0;
    s.extrapolation = c.node.attr_float("extrapolation_value", 0.0);
    if (c.has(2)) scales = float_values(c, 2);
    if (c.has(3)) sizes = const_ints_1d(c, 3);
    if (s.coord == "tf_crop_and_resize") {
      std::vector<double> roi = float_values(c, 1);
      if (roi.size() != 2 * s.in.size()) c.error("roi needs ", 2 * s.in.size(), " values");
      s.roi_start.assign(roi.begin(), roi.begin() + s.in.size());
      s.roi_end.assign(roi.begin() + s.in.size(), roi.end());
    }
  }
  set_output_size(c, &s, scales, sizes);
  return {resize(c, x, s)};
}

std::vector<TensorBoxPtr> lower_upsample(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  ResizeSpec s;
  s.in = x->size;
  s.mode = c.node.attr_string("mode", "nearest");
  if (s.mode == "bilinear") s.mode = "linear";
  s.coord = "asymmetric";
  s.nearest = "floor";
  std::vector<double> scales = c.opset < 9 ? c.node.attr_floats("scales") : float_values(c, 1);
  set_output_size(c, &s, scales, {});
  return {resize(c, x, s)};
}

}  // namespace

void register_resize_ops(LoweringTable& t) {
  t.add("Resize", lower_resize);
  t.add("Upsample", lower_upsample);
}

}  // namespace ferrite
