// Signal-processing generators: the window functions HannWindow, HammingWindow and
// BlackmanWindow (17), each a sum of cosines of 2*pi*n/N over n in [0, size), N = size
// (periodic, the default) or size - 1 (symmetric), computed in float64, stored in
// output_datatype; MelWeightMatrix (17), a constant made at compile time; and DFT (17, 20)
// and STFT (17) as direct transforms: each output bin a float64 reduction over the input
// samples, the angle 2*pi*(k*n mod N)/N taken from an exact integer product.
#include <cmath>
#include <cstring>
#include <functional>

#include "compiler/lower/lowering.h"

namespace ferrite {
namespace {

// w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N)
std::vector<TensorBoxPtr> lower_window(LowerCtx& c, double a0, double a1, double a2) {
  const std::vector<int64_t> size = c.const_ints(0);
  if (size.size() != 1 || c.input(0)->size.size() != 0) c.error("size must be a scalar");
  const int64_t n = size[0];
  if (n < 0 || n > (int64_t{1} << 40)) c.error("size ", n, " is out of range");
  DType out = DType::F32;
  const int64_t code = c.node.attr_int("output_datatype", 1);
  if (!dtype_from_onnx(code, &out)) c.unsupported("output_datatype ", code);
  const bool periodic = c.node.attr_int("periodic", 1) != 0;
  const double period = static_cast<double>(periodic ? n : n - 1);
  const double step = period > 0 ? 2 * M_PI / period : 0;
  Loader fn = [=](KernelBuilder& b, const std::vector<Index>& idx) {
    const ScalarType t = ScalarType::F64;
    const V x = b.binary(Op::Mul, b.cast(b.index_value(idx[0]), t), b.constant(t, step));
    V w = b.binary(Op::Sub, b.constant(t, a0),
                   b.binary(Op::Mul, b.constant(t, a1), b.unary(Op::Cos, x)));
    if (a2 != 0) {
      const V x2 = b.binary(Op::Mul, x, b.constant(t, 2));
      w = b.binary(Op::Add, w, b.binary(Op::Mul, b.constant(t, a2), b.unary(Op::Cos, x2)));
    }
    return b.cast(w, compute_type(out));
  };
  return {make_pointwise_box(out, {n}, fn, c.origin())};
}

double scalar_input(const LowerCtx& c, size_t i) {
  auto d = c.const_data(i);
  if (d->elements() != 1) c.error("input ", i, " must be a scalar");
  return d->float_at(0);
}

// MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins] triangular filters, their corners
// evenly spaced on the mel scale between the edge frequencies, as the operator's reference
// computes them (bin = floor((dft_length + 1) * hz / sample_rate)).
std::vector<TensorBoxPtr> lower_mel_weight_matrix(LowerCtx& c) {
  const double mel_bins = scalar_input(c, 0), dft = scalar_input(c, 1);
  const double rate = scalar_input(c, 2), lo = scalar_input(c, 3), hi = scalar_input(c, 4);
  if (!(mel_bins >= 1 && mel_bins <= 1 << 20) || !(dft >= 1 && dft <= 1 << 24) || !(rate > 0) ||
      !(lo >= 0) || !(hi >= lo)) {
    c.error("num_mel_bins, dft_length and sample_rate must be positive, 0 <= lower <= upper");
  }
  DType out = DType::F32;
  const int64_t code = c.node.attr_int("output_datatype", 1);
  if (!dtype_from_onnx(code, &out) || (out != DType::F32 && out != DType::F64)) {
    c.unsupported("output_datatype ", code);
  }
  const int64_t bins = static_cast<int64_t>(mel_bins), len = static_cast<int64_t>(dft);
  const int64_t spectrum = len / 2 + 1;
  auto mel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
  const double lo_mel = mel(lo), step = (mel(hi) - lo_mel) / static_cast<double>(bins + 2);
  std::vector<int64_t> corner(static_cast<size_t>(bins + 2));
  for (int64_t i = 0; i < bins + 2; ++i) {
    const double hz = 700 * (std::pow(10.0, (static_cast<double>(i) * step + lo_mel) / 2595) - 1);
    const double b = std::floor((dft + 1) * hz / rate);
    if (!(b >= 0 && b < static_cast<double>(spectrum))) {
      c.error("a filter edge falls outside the ", spectrum, " spectrogram bins");
    }
    corner[static_cast<size_t>(i)] = static_cast<int64_t>(b);
  }
  std::vector<double> w(static_cast<size_t>(spectrum * bins), 0.0);
  auto set = [&](int64_t j, int64_t i, double v) { w[static_cast<size_t>(j * bins + i)] = v; };
  for (int64_t i = 0; i < bins; ++i) {
    const int64_t left = corner[i], center = corner[i + 1], right = corner[i + 2];
    if (center == left) {
      set(center, i, 1);
    } else {
      for (int64_t j = left; j <= center; ++j) {
        set(j, i, static_cast<double>(j - left) / static_cast<double>(center - left));
      }
    }
    for (int64_t j = center; j < right; ++j) {
      set(j, i, static_cast<double>(right - j) / static_cast<double>(right - center));
    }
  }
  auto data = std::make_shared<TensorData>();
  data->dtype = out;
  data->shape = {spectrum, bins};
  data->bytes.resize(w.size() * dtype_size(out));
  uint8_t* bytes = data->bytes.mutable_data();
  for (size_t i = 0; i < w.size(); ++i) {
    if (out == DType::F32) {
      const auto f = static_cast<float>(w[i]);
      std::memcpy(bytes + 4 * i, &f, 4);
    } else {
      std::memcpy(bytes + 8 * i, &w[i], 8);
    }
  }
  return {constant_box(c.gl, std::move(data), "")};
}

// One bin of a discrete Fourier transform: sum over n of x[n] e^(-+2 pi i k n / length)
// (+ when inverse, then divided by length), in f64. `sample(b, outer, n, part)` loads the
// real (0) or imaginary (1) part of the input sample n for the output point `outer`.
struct Transform {
  using Sample = std::function<V(KernelBuilder&, const std::vector<Index>&, const Index&, int)>;
  int64_t length = 1;
  bool inverse = false, complex = false;
  int bin_dim = 0;  // the outer dim that is the frequency k
  Sample sample;

  // Output component c (0 real, 1 imaginary; the last outer dim) of sample n's term.
  V term(KernelBuilder& b, const std::vector<Index>& o, const Index& n) const {
    const ScalarType t = ScalarType::F64;
    const V k = b.index_value(o[static_cast<size_t>(bin_dim)]);
    const V kn = b.binary(Op::Mod, b.binary(Op::Mul, k, b.index_value(n)), b.constant_i64(length));
    const V theta =
        b.binary(Op::Mul, b.cast(kn, t), b.constant(t, 2 * M_PI / static_cast<double>(length)));
    const V cs = b.unary(Op::Cos, theta), sn = b.unary(Op::Sin, theta);
    const V xr = b.cast(sample(b, o, n, 0), t);
    const V xi = complex ? b.cast(sample(b, o, n, 1), t) : b.constant(t, 0);
    // forward: (xr + i xi)(cos - i sin); inverse: (xr + i xi)(cos + i sin)
    const V sgn = b.constant(t, inverse ? -1 : 1);
    const V re = b.binary(Op::Add, b.binary(Op::Mul, xr, cs),
                          b.binary(Op::Mul, sgn, b.binary(Op::Mul, xi, sn)));
    const V im = b.binary(Op::Sub, b.binary(Op::Mul, xi, cs),
                          b.binary(Op::Mul, sgn, b.binary(Op::Mul, xr, sn)));
    const V real_part = b.binary(Op::Eq, b.index_value(o.back()), b.constant_i64(0));
    return b.where(real_part, re, im);
  }
};

// The transform as a reduction over `samples` input samples into `out` (last dim 2).
TensorBoxPtr transform_box(const LowerCtx& c, const Transform& tr, std::vector<int64_t> out,
                           int64_t samples, DType dtype) {
  auto def = std::make_shared<ComputedDef>();
  def->is_reduction = true;
  def->reduce = ReduceKind::Sum;
  def->origin = c.origin();
  def->ranges = std::move(out);
  def->reduction_ranges = {samples};
  def->rfn = [tr](KernelBuilder& b, const std::vector<Index>& o, const std::vector<Index>& r) {
    return tr.term(b, o, r[0]);
  };
  const double scale = tr.inverse ? 1.0 / static_cast<double>(tr.length) : 1.0;
  if (scale != 1.0) {
    def->post = [scale](KernelBuilder& b, V v) {
      return b.binary(Op::Mul, v, b.constant(v.type, scale));
    };
  }
  TensorBoxPtr t = make_reduction_box(dtype, def);
  c.gl.realize(t);
  return t;
}

int64_t scalar_int(const LowerCtx& c, size_t i, const char* what) {
  const std::vector<int64_t> v = c.const_ints(i);
  if (v.size() != 1) c.error(what, " must be a scalar");
  return v[0];
}

// DFT's inverse of a onesided spectrum (irfft): X [..., length / 2 + 1, ..., 2], the bins
// above length / 2 the conjugates of those below, gives a real signal [..., length, ..., 1].
TensorBoxPtr inverse_onesided(const LowerCtx& c, const TensorBoxPtr& x, int axis, int64_t length) {
  const int64_t bins = x->size[static_cast<size_t>(axis)];
  std::vector<int64_t> out = x->size;
  out[static_cast<size_t>(axis)] = length;
  out.back() = 1;
  auto def = std::make_shared<ComputedDef>();
  def->is_reduction = true;
  def->reduce = ReduceKind::Sum;
  def->origin = c.origin();
  def->ranges = out;
  def->reduction_ranges = {length};
  const size_t a = static_cast<size_t>(axis);
  def->rfn = [x, a, bins, length](KernelBuilder& b, const std::vector<Index>& o,
                                  const std::vector<Index>& r) {
    const ScalarType t = ScalarType::F64;
    const V k = b.index_value(r[0]);
    const V kn =
        b.binary(Op::Mod, b.binary(Op::Mul, k, b.index_value(o[a])), b.constant_i64(length));
    const V theta =
        b.binary(Op::Mul, b.cast(kn, t), b.constant(t, 2 * M_PI / static_cast<double>(length)));
    // bin k, or the conjugate of bin length - k above the stored half
    const V stored = b.binary(Op::Lt, k, b.constant_i64(bins));
    const V mirror = b.binary(Op::Sub, b.constant_i64(length), k);
    const V src = b.where(stored, k, mirror);
    const V inside = b.binary(Op::And, b.binary(Op::Ge, src, b.constant_i64(0)),
                              b.binary(Op::Lt, src, b.constant_i64(bins)));
    std::vector<Index> at = o;
    at[a] = ix_value(src.id);
    V xr, xi;
    {
      MaskScope scope(b, inside);
      at.back() = ix_const(0);
      xr = b.cast(x->load(b, at), t);
      at.back() = ix_const(1);
      xi = b.cast(x->load(b, at), t);
    }
    xi = b.where(stored, xi, b.unary(Op::Neg, xi));
    const V re = b.binary(Op::Sub, b.binary(Op::Mul, xr, b.unary(Op::Cos, theta)),
                          b.binary(Op::Mul, xi, b.unary(Op::Sin, theta)));
    return b.where(inside, re, b.constant(t, 0));
  };
  def->post = [length](KernelBuilder& b, V v) {
    return b.binary(Op::Mul, v, b.constant(v.type, 1.0 / static_cast<double>(length)));
  };
  TensorBoxPtr y = make_reduction_box(x->dtype, def);
  c.gl.realize(y);
  return y;
}

// DFT: along `axis` of x [..., n, ..., 1 or 2], length dft_length (the input cut or padded
// with zeros to it), every bin or the first length / 2 + 1 (onesided).
std::vector<TensorBoxPtr> lower_dft(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  if (!dtype_is_float(x->dtype)) c.unsupported("non-float input");
  const size_t r = x->size.size();
  if (r < 2 || (x->size.back() != 1 && x->size.back() != 2)) {
    c.error("input must end in a dim of 1 (real) or 2 (complex)");
  }
  int64_t a =
      c.opset >= 20 ? (c.has(2) ? scalar_int(c, 2, "axis") : -2) : c.node.attr_int("axis", 1);
  const int axis = c.axis(a, r);
  if (axis == static_cast<int>(r) - 1) c.error("axis must not be the last (complex) dim");
  const int64_t n = x->size[static_cast<size_t>(axis)];
  const bool inverse = c.node.attr_int("inverse", 0) != 0;
  const bool onesided = c.node.attr_int("onesided", 0) != 0;
  const int64_t length = c.has(1)              ? scalar_int(c, 1, "dft_length")
                         : inverse && onesided ? 2 * (n - 1)
                                               : n;
  if (length < 1 || length > (int64_t{1} << 31)) c.error("dft_length ", length, " is out of range");
  if (inverse && onesided) {
    if (x->size.back() != 2) c.error("a onesided inverse needs a complex input");
    return {inverse_onesided(c, x, axis, length)};
  }
  Transform tr;
  tr.length = length;
  tr.inverse = inverse;
  tr.complex = x->size.back() == 2;
  tr.bin_dim = axis;
  tr.sample = [x, axis](KernelBuilder& b, const std::vector<Index>& o, const Index& s, int part) {
    std::vector<Index> at = o;
    at[static_cast<size_t>(axis)] = s;
    at.back() = ix_const(part);
    return x->load(b, at);
  };
  std::vector<int64_t> out = x->size;
  out[static_cast<size_t>(axis)] = onesided ? length / 2 + 1 : length;
  out.back() = 2;
  return {transform_box(c, tr, out, std::min(n, length), x->dtype)};
}

// STFT: frames of `frame_length` samples every `frame_step` along the signal [batch, length,
// 1 or 2], each multiplied by the window, transformed: [batch, frames, bins, 2].
std::vector<TensorBoxPtr> lower_stft(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  if (!dtype_is_float(x->dtype)) c.unsupported("non-float input");
  if (x->size.size() != 3 || (x->size[2] != 1 && x->size[2] != 2)) {
    c.error("signal must be [batch, length, 1 or 2]");
  }
  const int64_t step = scalar_int(c, 1, "frame_step");
  const TensorBoxPtr window = c.has(2) ? c.input(2) : nullptr;
  if (window && window->size.size() != 1) c.error("window must be 1-D");
  int64_t frame = window ? window->size[0] : -1;
  if (c.has(3)) {
    frame = scalar_int(c, 3, "frame_length");
    if (window && window->size[0] != frame) c.error("window and frame_length differ");
  }
  if (frame < 1 || frame > x->size[1]) c.error("frame_length ", frame, " does not fit the signal");
  if (step < 1) c.error("frame_step must be positive");
  const int64_t frames = (x->size[1] - frame) / step + 1;
  Transform tr;
  tr.length = frame;
  tr.complex = x->size[2] == 2;
  tr.bin_dim = 2;
  tr.sample = [x, window, step](KernelBuilder& b, const std::vector<Index>& o, const Index& s,
                                int part) {
    const Index at = ix_add(ix_mul(o[1], step), s);
    V v = x->load(b, {o[0], at, ix_const(part)});
    if (window)
      v = b.binary(Op::Mul, b.cast(v, ScalarType::F64),
                   b.cast(window->load(b, {s}), ScalarType::F64));
    return v;
  };
  const bool onesided = c.node.attr_int("onesided", 1) != 0;
  return {transform_box(c, tr, {x->size[0], frames, onesided ? frame / 2 + 1 : frame, 2}, frame,
                        x->dtype)};
}

}  // namespace

void register_signal_ops(LoweringTable& t) {
  t.add("DFT", lower_dft);
  t.add("STFT", lower_stft);
  t.add("MelWeightMatrix", lower_mel_weight_matrix);
  t.add("HannWindow", [](LowerCtx& c) { return lower_window(c, 0.5, 0.5, 0); });
  t.add("HammingWindow", [](LowerCtx& c) { return lower_window(c, 25.0 / 46, 21.0 / 46, 0); });
  t.add("BlackmanWindow", [](LowerCtx& c) { return lower_window(c, 0.42, 0.5, 0.08); });
}

}  // namespace ferrite
