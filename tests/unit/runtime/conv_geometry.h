// A Conv / ConvTranspose call's geometry for the extern tests (conv_cases.h, the oneDNN
// tests, the random extern tester): sizes, its attributes as the extern's ConvCall, the
// shapes that follow, and random geometries.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "compiler/plan/externs/conv_call.h"

namespace ferrite {
namespace conv_geometry {

using Dims = std::vector<int64_t>;

struct Geometry {
  bool transpose = false;
  int64_t n = 1, c = 1, m = 1, group = 1;
  Dims in, kernel, stride, dilation, pad_begin, pad_end;
  bool bias = false;

  size_t k() const { return in.size(); }
  int64_t span(size_t d) const { return (kernel[d] - 1) * dilation[d] + 1; }
  int64_t out(size_t d) const {
    if (transpose) return stride[d] * (in[d] - 1) + span(d) - pad_begin[d] - pad_end[d];
    const int64_t room = in[d] + pad_begin[d] + pad_end[d] - span(d);
    return room >= 0 ? room / stride[d] + 1 : 0;
  }
  // ConvTranspose: the output elements its full output covers (the others are border).
  int64_t interior(size_t d) const {
    if (!transpose) return out(d);
    return out(d) - std::max<int64_t>(-pad_begin[d], 0) - std::max<int64_t>(-pad_end[d], 0);
  }
  ConvCall attrs() const {
    return ConvCall{transpose, group, stride, dilation, pad_begin, pad_end};
  }
  Dims x_dims() const { return cat({n, c}, in); }
  Dims w_dims() const { return cat(transpose ? Dims{c, m / group} : Dims{m, c / group}, kernel); }
  Dims y_dims() const {
    Dims o;
    for (size_t d = 0; d < k(); ++d) o.push_back(out(d));
    return cat({n, m}, o);
  }
  std::string text() const {
    std::string s = std::string(transpose ? "ConvTranspose" : "Conv") + " n" + std::to_string(n) +
                    " c" + std::to_string(c) + " m" + std::to_string(m) + " g" +
                    std::to_string(group) + (bias ? " bias" : "");
    for (size_t d = 0; d < k(); ++d)
      s += " | in " + std::to_string(in[d]) + " k" + std::to_string(kernel[d]) + " s" +
           std::to_string(stride[d]) + " d" + std::to_string(dilation[d]) + " p" +
           std::to_string(pad_begin[d]) + "," + std::to_string(pad_end[d]);
    return s;
  }
  // Each output element sums up to C/G * kernel products of values in [-1, 1]: a backend in
  // float, the reference in double, so the rounding grows as sqrt(terms) float ulps of the
  // partial sums. Relative to max(1, |want|); measured worst 1.2e-5 at 576 terms (oneDNN,
  // the 64-channel 3x3 case), post-op approximations included.
  double tol() const {
    int64_t terms = c / group;
    for (int64_t j : kernel) terms *= j;
    return 1e-5 + 2e-6 * std::sqrt(static_cast<double>(terms));
  }
  static Dims cat(Dims a, const Dims& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }
};

// 1 to 3 spatial dims, depthwise a quarter of the time, small sizes; ConvTranspose with
// negative pads too (output_padding, an output_shape past the full one). Every geometry
// keeps an output element its full output covers.
inline Geometry random_geometry(std::mt19937& rng, bool transpose) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  Geometry g;
  g.transpose = transpose;
  const size_t k = static_cast<size_t>(pick(1, 3));
  g.n = pick(1, 2);
  if (pick(0, 3) == 0) {  // depthwise
    g.group = g.c = g.m = pick(1, 5);
  } else {
    g.group = pick(1, 3);
    g.c = g.group * pick(1, 3);
    g.m = g.group * pick(1, 3);
  }
  g.bias = pick(0, 1) == 1;
  const int64_t max_in = k == 1 ? 13 : k == 2 ? 8 : 5;
  for (size_t d = 0; d < k; ++d) {
    g.kernel.push_back(pick(1, 3));
    g.stride.push_back(pick(1, 3));
    g.dilation.push_back(pick(1, 2));
    g.in.push_back(pick(1, max_in));
    g.pad_begin.push_back(pick(transpose ? -1 : 0, 2));
    g.pad_end.push_back(pick(transpose ? -2 : 0, 2));
    while (g.out(d) < 1 || g.interior(d) < 1) {
      if (transpose) {
        ++g.in[d];
      } else {
        ++g.pad_end[d];
      }
    }
  }
  return g;
}

inline Geometry conv2d(int64_t n, int64_t c, int64_t m, int64_t group, Dims in, int64_t kernel,
                       int64_t stride, int64_t dilation, int64_t pad) {
  Geometry g;
  g.n = n;
  g.c = c;
  g.m = m;
  g.group = group;
  g.in = in;
  g.bias = true;
  g.kernel = {kernel, kernel};
  g.stride = {stride, stride};
  g.dilation = {dilation, dilation};
  g.pad_begin = {pad, pad};
  g.pad_end = {pad, pad};
  return g;
}

}  // namespace conv_geometry
}  // namespace ferrite
