// Signal-processing generators: the window functions HannWindow, HammingWindow and
// BlackmanWindow (17), each a sum of cosines of 2*pi*n/N over n in [0, size), N = size
// (periodic, the default) or size - 1 (symmetric), computed in float64, stored in
// output_datatype; and MelWeightMatrix (17), a constant made at compile time.
#include <cmath>
#include <cstring>

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

}  // namespace

void register_signal_ops(LoweringTable& t) {
  t.add("MelWeightMatrix", lower_mel_weight_matrix);
  t.add("HannWindow", [](LowerCtx& c) { return lower_window(c, 0.5, 0.5, 0); });
  t.add("HammingWindow", [](LowerCtx& c) { return lower_window(c, 25.0 / 46, 21.0 / 46, 0); });
  t.add("BlackmanWindow", [](LowerCtx& c) { return lower_window(c, 0.42, 0.5, 0.08); });
}

}  // namespace ferrite
