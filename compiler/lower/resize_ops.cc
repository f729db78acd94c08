// Resize and Upsample as pointwise gathers, the way onnxruntime's upsample kernels run them:
// every output coordinate along a dim maps back to a source coordinate (per
// coordinate_transformation_mode) and reads the nearest element or a separable
// linear/cubic blend of its neighbours, indices clamped to the edge (as the ONNX reference
// pads by edge). Those taps depend on one coordinate only, so they are computed here once
// per dim, in f64 as the reference does, into constant tables the kernel reads: the kernel
// computes no coordinate (an f64 computation per element ran on no backend's vectors, 0.46
// us an element) and blends in the compute type.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>

#include "compiler/loopir/checked_int.h"
#include "compiler/lower/lowering.h"
#include "compiler/plan/resource_limits.h"

namespace ferrite {
namespace {

enum class Mode { Nearest, Linear, Cubic };
enum class Coord {
  HalfPixel,
  HalfPixelSymmetric,
  PytorchHalfPixel,
  AlignCorners,
  Asymmetric,
  TfHalfPixelForNn,
  TfCropAndResize
};
enum class Rounding { RoundPreferFloor, RoundPreferCeil, Floor, Ceil };

struct ResizeSpec {
  Mode mode = Mode::Nearest;
  Coord coord = Coord::HalfPixel;
  Rounding nearest = Rounding::RoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;  // 18: linear and cubic downsampling widen their filter by 1/scale
  double extrapolation = 0.0;
  std::vector<int64_t> in, out;
  std::vector<double> scale, roi_start, roi_end;
};

template <class E>
E parse_choice(const LowerCtx& c, const char* attr, const std::string& value,
               const std::vector<std::pair<const char*, E>>& choices) {
  for (const auto& [name, e] : choices)
    if (value == name) return e;
  c.unsupported(attr, " '", value, "'");
}

Mode parse_mode(const LowerCtx& c, const std::string& value) {
  return parse_choice<Mode>(
      c, "mode", value,
      {{"nearest", Mode::Nearest}, {"linear", Mode::Linear}, {"cubic", Mode::Cubic}});
}

// Source coordinate of output coordinate x along dim d, as the ONNX reference computes it.
double source_coord(const ResizeSpec& s, size_t d, double x) {
  // The reference uses the unrounded resized length in * scale.
  const double in = static_cast<double>(s.in[d]), sc = s.scale[d], out = in * sc;
  switch (s.coord) {
    case Coord::AlignCorners:
      return out <= 1 ? 0 : x * ((in - 1) / (out - 1));
    case Coord::Asymmetric:
      return x / sc;
    case Coord::TfHalfPixelForNn:
      return (x + 0.5) / sc;
    case Coord::TfCropAndResize: {
      const double st = s.roi_start[d], en = s.roi_end[d];
      if (out <= 1) return 0.5 * (st + en) * (in - 1);
      return st * (in - 1) + x * ((en - st) * (in - 1) / (out - 1));
    }
    case Coord::HalfPixelSymmetric: {
      const double adjustment = static_cast<double>(s.out[d]) / out;
      const double offset = in / 2 * (1 - adjustment);
      return offset + (x + 0.5) / sc - 0.5;
    }
    case Coord::PytorchHalfPixel:
      if (out <= 1) return 0;
      break;
    case Coord::HalfPixel:
      break;
  }
  return (x + 0.5) / sc - 0.5;
}

double nearest_coord(const ResizeSpec& s, double xo) {
  switch (s.nearest) {
    case Rounding::Floor:
      return std::floor(xo);
    case Rounding::Ceil:
      return std::ceil(xo);
    case Rounding::RoundPreferCeil:
      return std::floor(xo + 0.5);
    case Rounding::RoundPreferFloor:
      break;
  }
  return std::ceil(xo - 0.5);
}

// Weights of the taps floor(x)-1 .. floor(x)+2 for cubic, floor(x) .. floor(x)+1 for linear;
// returns how many.
int tap_weights(const ResizeSpec& s, double r, double w[4]) {
  if (s.mode == Mode::Linear) {
    w[0] = 1 - r;
    w[1] = r;
    return 2;
  }
  const double A = s.cubic_a;
  // Keys' cubic convolution: near taps at distance t in [0,1], far taps at t in [1,2].
  auto near = [&](double t) { return ((A + 2) * t - (A + 3)) * t * t + 1; };
  auto far = [&](double t) { return ((A * t - 5 * A) * t + 8 * A) * t - 4 * A; };
  w[0] = far(r + 1);
  w[1] = near(r);
  w[2] = near(1 - r);
  w[3] = far((1 - r) + 1);
  return 4;
}

// The taps of a filter widened by 1 / scale (antialias, downsampling): `first`, the offset
// of the first tap from floor(x) (ratio in (0, 1]), and the normalised weights; as the
// operator's reference.
int64_t antialias_first(const ResizeSpec& s, double scale) {
  const double support = s.mode == Mode::Linear ? 1 : 2;
  return static_cast<int64_t>(std::floor(-support / std::min(scale, 1.0)) + 1);
}

std::vector<double> antialias_weights(const ResizeSpec& s, double ratio, double scale) {
  scale = std::min(scale, 1.0);
  const int64_t first = antialias_first(s, scale), count = 2 - 2 * first;
  const double A = s.cubic_a;
  std::vector<double> w;
  double total = 0;
  for (int64_t i = first; i < first + count; ++i) {
    const double x = std::abs(scale * (static_cast<double>(i) - ratio));
    double v;
    if (s.mode == Mode::Linear) {
      v = std::max(0.0, 1 - x);
    } else if (x <= 1) {
      v = ((A + 2) * x - (A + 3)) * x * x + 1;
    } else {
      v = x < 2 ? ((A * x - 5 * A) * x + 8 * A) * x - 4 * A : 0.0;
    }
    w.push_back(v);
    total += v;
  }
  for (double& v : w) v /= total;
  return w;
}

// A source coordinate clamped to the edge, as an index (a NaN or huge coordinate too).
int64_t edge_index(double v, int64_t n) {
  if (!(v > 0)) return 0;
  return v >= static_cast<double>(n - 1) ? n - 1 : static_cast<int64_t>(v);
}

// One dim's taps: for each output coordinate `taps` (source index, weight) pairs, taps of
// one index merged; the weights are normalised if excluding outside. Coordinates whose
// source lies outside the input (tf_crop_and_resize) are those outside [inside_lo,
// inside_hi]: the source coordinate is monotone in the output's.
struct DimTaps {
  bool identity = false;
  int64_t taps = 1;
  std::vector<int64_t> index;  // out x taps
  std::vector<double> weight;  // out x taps; empty for nearest (weight 1)
  int64_t inside_lo = 0, inside_hi = -1;
};

// The taps of output coordinate x, merged (one entry per source index), at most `width`.
void coordinate_taps(const ResizeSpec& s, size_t d, int64_t x, std::vector<int64_t>* index,
                     std::vector<double>* weight, bool* inside) {
  const int64_t n = s.in[d];
  const double xo = source_coord(s, d, static_cast<double>(x));
  *inside = !(xo < 0 || xo > static_cast<double>(n - 1));
  index->clear();
  weight->clear();
  if (s.mode == Mode::Nearest) {
    index->push_back(edge_index(nearest_coord(s, xo), n));
    weight->push_back(1);
    return;
  }
  double fl = std::floor(xo);
  std::vector<double> w;
  double first;
  if (s.antialias) {
    // ratio in (0, 1]: an integer coordinate takes its left neighbour as floor
    double ratio = xo - fl;
    if (ratio == 0 && std::isfinite(xo)) {
      ratio = 1;
      fl -= 1;
    }
    w = antialias_weights(s, ratio, s.scale[d]);
    first = fl + static_cast<double>(antialias_first(s, s.scale[d]));
  } else {
    double w4[4];
    w.assign(w4, w4 + tap_weights(s, xo - fl, w4));
    first = fl - (s.mode == Mode::Cubic ? 1 : 0);
  }
  double total = 0;
  for (size_t k = 0; k < w.size(); ++k) {
    const double pos = first + static_cast<double>(k);
    double wk = w[k];
    if (s.exclude_outside && !(pos >= 0 && pos <= static_cast<double>(n - 1))) wk = 0;
    total += wk;
    const int64_t i = edge_index(pos, n);
    size_t same = 0;
    while (same < index->size() && (*index)[same] != i) ++same;
    if (same == index->size()) {
      index->push_back(i);
      weight->push_back(0);
    }
    (*weight)[same] += wk;
  }
  if (s.exclude_outside)
    for (double& v : *weight) v /= total;
}

// Taps per output coordinate along dim d.
int64_t tap_width(const LowerCtx& c, const ResizeSpec& s, size_t d) {
  if (s.mode == Mode::Nearest) return 1;
  if (!s.antialias || s.scale[d] >= 1) return s.mode == Mode::Linear ? 2 : 4;
  if (!(s.scale[d] * 65536 >= 1)) {
    c.error("dim ", d, ": an antialiased scale below 1/65536 (", s.scale[d], ")");
  }
  return 2 - 2 * antialias_first(s, s.scale[d]);
}

DimTaps dim_taps(const LowerCtx& c, const ResizeSpec& s, size_t d) {
  DimTaps t;
  const int64_t n = s.in[d], out = s.out[d];
  // An empty output reads nothing: no table (its kernel runs no point).
  if (out == 0 || (n == out && s.scale[d] == 1.0 && s.coord != Coord::TfCropAndResize)) {
    t.identity = true;
    t.inside_hi = out - 1;
    return t;
  }
  const int64_t width = tap_width(c, s, d);
  // The tables are plan constants: out x width indices and weights, checked against the
  // memory limit with the output before they are built (an output dim of 10^9 would
  // allocate them for seconds, then fail the plan's check).
  const int64_t table_bytes =
      checked_mul(checked_mul(out, width, "a tap table"), 16, "a tap table");
  check_memory_limit(
      table_bytes, c.gl.memory_limit,
      str_cat(c.origin(), ": the tap tables of dim ", d, " (", out, " by ", width, ")"));
  t.index.resize(static_cast<size_t>(out * width));
  t.weight.resize(static_cast<size_t>(out * width));
  int64_t inside_count = 0, taps = 1;
  t.inside_lo = out;
  std::vector<int64_t> index;
  std::vector<double> weight;
  for (int64_t x = 0; x < out; ++x) {
    const size_t row = static_cast<size_t>(x * width);
    bool inside = false;
    coordinate_taps(s, d, x, &index, &weight, &inside);
    const int64_t count = static_cast<int64_t>(index.size());
    for (int64_t k = 0; k < width; ++k) {  // padding: the last index, no weight
      const size_t from = static_cast<size_t>(std::min(k, count - 1));
      t.index[row + static_cast<size_t>(k)] = index[from];
      t.weight[row + static_cast<size_t>(k)] = k < count ? weight[from] : 0;
    }
    taps = std::max<int64_t>(taps, count);
    if (inside) {
      ++inside_count;
      t.inside_lo = std::min(t.inside_lo, x);
      t.inside_hi = x;
    }
  }
  if (inside_count != t.inside_hi - t.inside_lo + 1)
    c.error("dim ", d, ": the source coordinate is not monotone in the output's");
  if (taps < width) {  // keep the first `taps` columns
    for (int64_t x = 0; x < out; ++x) {
      for (int64_t k = 0; k < taps; ++k) {
        t.index[static_cast<size_t>(x * taps + k)] = t.index[static_cast<size_t>(x * width + k)];
        t.weight[static_cast<size_t>(x * taps + k)] = t.weight[static_cast<size_t>(x * width + k)];
      }
    }
    t.index.resize(static_cast<size_t>(out * taps));
    t.weight.resize(static_cast<size_t>(out * taps));
  }
  t.taps = taps;
  if (s.mode == Mode::Nearest) t.weight.clear();
  return t;
}

// A table of one dim's taps as a [out, taps] constant of `dt`.
template <class T>
TensorBoxPtr table(LowerCtx& c, DType dt, int64_t out, int64_t taps, const std::vector<T>& v) {
  auto data = std::make_shared<TensorData>();
  data->dtype = dt;
  data->shape = {out, taps};
  data->bytes.resize(v.size() * dtype_size(dt));
  uint8_t* bytes = data->bytes.mutable_data();
  for (size_t i = 0; i < v.size(); ++i) {
    if (dt == DType::I32) {
      const auto e = static_cast<int32_t>(v[i]);
      std::memcpy(bytes + 4 * i, &e, 4);
    } else if (dt == DType::F32) {
      const auto e = static_cast<float>(v[i]);
      std::memcpy(bytes + 4 * i, &e, 4);
    } else {
      std::memcpy(bytes + 8 * i, &v[i], 8);
    }
  }
  return constant_box(c.gl, std::move(data), "");
}

// How the kernel reads one dim's taps: the output coordinate itself, constants (one output
// coordinate, or every coordinate alike), or rows of the tables.
struct DimReader {
  const DimTaps* taps = nullptr;
  bool constant = false;
  TensorBoxPtr index, weight;
};

bool same_for_every_coordinate(const DimTaps& t) {
  const size_t k = static_cast<size_t>(t.taps);
  for (size_t i = k; i < t.index.size(); ++i) {
    if (t.index[i] != t.index[i % k]) return false;
    if (!t.weight.empty() && t.weight[i] != t.weight[i % k]) return false;
  }
  return true;
}

DimReader dim_reader(LowerCtx& c, const DimTaps& t, int64_t n, int64_t out, DType weight_type) {
  DimReader r;
  r.taps = &t;
  if (t.identity) return r;
  r.constant = same_for_every_coordinate(t);
  if (r.constant) return r;
  const DType index_type = n - 1 <= std::numeric_limits<int32_t>::max() ? DType::I32 : DType::I64;
  r.index = index_type == DType::I32 ? table(c, DType::I32, out, t.taps, t.index)
                                     : table(c, DType::I64, out, t.taps, t.index);
  if (!t.weight.empty()) r.weight = table(c, weight_type, out, t.taps, t.weight);
  return r;
}

// Tap k of a dim at output coordinate `at`: its source index (clamped into the input, which
// proves the gather inside it to a backend) and its weight (none for nearest).
std::pair<Index, V> read_tap(KernelBuilder& b, const DimReader& r, int64_t n, ScalarType ct,
                             const Index& at, int64_t k) {
  const DimTaps& t = *r.taps;
  if (t.identity) return {at, V()};
  if (r.constant) {
    V w = t.weight.empty() ? V() : b.constant(ct, t.weight[static_cast<size_t>(k)]);
    return {ix_const(t.index[static_cast<size_t>(k)]), w};
  }
  const std::vector<Index> row = {at, ix_const(k)};
  V i = b.cast(r.index->load(b, row), ScalarType::I64);
  i = b.binary(Op::Min, b.binary(Op::Max, i, b.constant(ScalarType::I64, 0)),
               b.constant_i64(n - 1));
  return {ix_value(i.id), r.weight ? r.weight->load(b, row) : V()};
}

TensorBoxPtr resize(LowerCtx& c, const TensorBoxPtr& x, const ResizeSpec& s) {
  if (!dtype_is_float(x->dtype) && s.mode != Mode::Nearest)
    c.unsupported(c.node.attr_string("mode", ""), " resize of ", dtype_name(x->dtype));
  const DType dt = x->dtype;
  const ScalarType ct = compute_type(dt);
  const size_t rank = s.in.size();
  auto taps = std::make_shared<std::vector<DimTaps>>();
  for (size_t d = 0; d < rank; ++d) taps->push_back(dim_taps(c, s, d));
  auto readers = std::make_shared<std::vector<DimReader>>();
  const DType weight_type = ct == ScalarType::F64 ? DType::F64 : DType::F32;
  for (size_t d = 0; d < rank; ++d)
    readers->push_back(dim_reader(c, (*taps)[d], s.in[d], s.out[d], weight_type));
  const bool crop = s.coord == Coord::TfCropAndResize;
  Loader fn = [x, s, ct, crop, taps, readers](KernelBuilder& b, const std::vector<Index>& idx) {
    std::vector<std::vector<std::pair<Index, V>>> read(idx.size());
    for (size_t d = 0; d < idx.size(); ++d) {
      const int64_t count = (*taps)[d].identity ? 1 : (*taps)[d].taps;
      for (int64_t k = 0; k < count; ++k)
        read[d].push_back(read_tap(b, (*readers)[d], s.in[d], ct, idx[d], k));
    }
    V acc;
    std::vector<size_t> pick(idx.size(), 0);
    while (true) {
      std::vector<Index> at;
      V w;
      for (size_t d = 0; d < idx.size(); ++d) {
        const auto& [i, wd] = read[d][pick[d]];
        at.push_back(i);
        if (wd.id >= 0) w = w.id < 0 ? wd : b.binary(Op::Mul, w, wd);
      }
      V term = x->load(b, at);
      if (w.id >= 0) term = b.binary(Op::Mul, w, term);
      acc = acc.id < 0 ? term : b.binary(Op::Add, acc, term);
      size_t d = idx.size();
      while (d > 0 && ++pick[d - 1] == read[d - 1].size()) pick[--d] = 0;
      if (d == 0) break;
    }
    if (!crop) return acc;
    V outside = b.constant(ScalarType::Bool, 0);
    for (size_t d = 0; d < idx.size(); ++d) {
      const DimTaps& t = (*taps)[d];
      if (t.inside_lo == 0 && t.inside_hi == s.out[d] - 1) continue;
      V at = b.index_value(idx[d]);
      V out_d = b.binary(Op::Or, b.binary(Op::Lt, at, b.constant_i64(t.inside_lo)),
                         b.binary(Op::Gt, at, b.constant_i64(t.inside_hi)));
      outside = b.binary(Op::Or, outside, out_d);
    }
    return b.where(outside, b.constant(ct, s.extrapolation), acc);
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

// Resize-18's axes: scales, sizes and roi list only those dims (the others keep their
// size, scale 1, roi [0, 1]). Returns the axes (every dim without the attribute).
std::vector<int> resize_axes(const LowerCtx& c, size_t rank) {
  std::vector<int> axes;
  if (!c.node.has_attr("axes")) {
    for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int>(d));
    return axes;
  }
  std::vector<bool> seen(rank, false);
  for (int64_t a : c.node.attr_ints("axes")) {
    const int d = c.axis(a, rank);
    if (seen[static_cast<size_t>(d)]) c.error("axes repeat axis ", d);
    seen[static_cast<size_t>(d)] = true;
    axes.push_back(d);
  }
  return axes;
}

// Per-axis values spread to every dim (`fill` for the dims not listed); empty stays empty.
template <class T>
std::vector<T> on_all_dims(const LowerCtx& c, const std::vector<T>& v, const std::vector<int>& axes,
                           size_t rank, T fill, const char* what) {
  if (v.empty()) return v;
  if (v.size() != axes.size())
    c.error(what, " has ", v.size(), " entries for ", axes.size(), " axes");
  std::vector<T> all(rank, fill);
  for (size_t i = 0; i < axes.size(); ++i) all[static_cast<size_t>(axes[i])] = v[i];
  return all;
}

// keep_aspect_ratio_policy (18) with sizes: one scale for every listed axis, the smallest
// (not_larger) or largest (not_smaller) of sizes / input sizes, and each output dim
// round(scale * input dim), half up. The scale, not the sizes, then maps coordinates.
void keep_aspect_ratio(const LowerCtx& c, const std::vector<int>& axes, ResizeSpec* s,
                       std::vector<int64_t>* sizes, std::vector<double>* scales) {
  const std::string policy = c.node.attr_string("keep_aspect_ratio_policy", "stretch");
  if (policy == "stretch" || sizes->empty()) return;
  if (policy != "not_larger" && policy != "not_smaller") {
    c.error("keep_aspect_ratio_policy '", policy, "'");
  }
  double scale = policy == "not_larger" ? std::numeric_limits<double>::infinity() : 0.0;
  for (int a : axes) {
    const size_t d = static_cast<size_t>(a);
    if (s->in[d] == 0) c.error("dim ", d, " is empty");
    const double r = static_cast<double>((*sizes)[d]) / static_cast<double>(s->in[d]);
    scale = policy == "not_larger" ? std::min(scale, r) : std::max(scale, r);
  }
  scales->assign(s->in.size(), 1.0);
  for (int a : axes) (*scales)[static_cast<size_t>(a)] = scale;
  s->scale = *scales;
  s->out = s->in;
  for (int a : axes) {
    const size_t d = static_cast<size_t>(a);
    s->out[d] =
        checked_int(std::floor(scale * static_cast<double>(s->in[d]) + 0.5), "an output dim");
  }
  check_sizes(c, *s);
  sizes->clear();
}

std::vector<TensorBoxPtr> lower_resize(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  ResizeSpec s;
  s.in = x->size;
  s.mode = parse_mode(c, c.node.attr_string("mode", "nearest"));
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  if (c.opset < 11) {
    s.coord = Coord::Asymmetric;
    s.nearest = Rounding::Floor;
    scales = float_values(c, 1);
  } else {
    s.antialias = c.node.attr_int("antialias", 0) != 0 && s.mode != Mode::Nearest;
    s.coord =
        parse_choice<Coord>(c, "coordinate_transformation_mode",
                            c.node.attr_string("coordinate_transformation_mode", "half_pixel"),
                            {{"half_pixel", Coord::HalfPixel},
                             {"half_pixel_symmetric", Coord::HalfPixelSymmetric},
                             {"pytorch_half_pixel", Coord::PytorchHalfPixel},
                             {"align_corners", Coord::AlignCorners},
                             {"asymmetric", Coord::Asymmetric},
                             {"tf_half_pixel_for_nn", Coord::TfHalfPixelForNn},
                             {"tf_crop_and_resize", Coord::TfCropAndResize}});
    s.nearest = parse_choice<Rounding>(c, "nearest_mode",
                                       c.node.attr_string("nearest_mode", "round_prefer_floor"),
                                       {{"round_prefer_floor", Rounding::RoundPreferFloor},
                                        {"round_prefer_ceil", Rounding::RoundPreferCeil},
                                        {"floor", Rounding::Floor},
                                        {"ceil", Rounding::Ceil}});
    s.cubic_a = c.node.attr_float("cubic_coeff_a", -0.75);
    s.exclude_outside = c.node.attr_int("exclude_outside", 0) != 0;
    s.extrapolation = c.node.attr_float("extrapolation_value", 0.0);
    const size_t r = s.in.size();
    const std::vector<int> axes = resize_axes(c, r);
    if (c.has(2)) scales = on_all_dims(c, float_values(c, 2), axes, r, 1.0, "scales");
    if (c.has(3)) sizes = on_all_dims(c, const_ints_1d(c, 3), axes, r, int64_t{-1}, "sizes");
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d] == -1 &&
          std::find(axes.begin(), axes.end(), static_cast<int>(d)) == axes.end()) {
        sizes[d] = s.in[d];
      }
    }
    if (s.coord == Coord::TfCropAndResize) {
      std::vector<double> roi = float_values(c, 1);
      if (roi.size() != 2 * axes.size()) c.error("roi needs ", 2 * axes.size(), " values");
      const size_t n = axes.size();
      s.roi_start =
          on_all_dims(c, std::vector<double>(roi.begin(), roi.begin() + n), axes, r, 0.0, "roi");
      s.roi_end =
          on_all_dims(c, std::vector<double>(roi.begin() + n, roi.end()), axes, r, 1.0, "roi");
    }
    keep_aspect_ratio(c, axes, &s, &sizes, &scales);
    if (!s.out.empty()) return {resize(c, x, s)};
  }
  set_output_size(c, &s, scales, sizes);
  return {resize(c, x, s)};
}

std::vector<TensorBoxPtr> lower_upsample(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  ResizeSpec s;
  s.in = x->size;
  const std::string mode = c.node.attr_string("mode", "nearest");
  s.mode = parse_mode(c, mode == "bilinear" ? "linear" : mode);
  s.coord = Coord::Asymmetric;
  s.nearest = Rounding::Floor;
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
