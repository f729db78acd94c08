#include "runtime/kernels/portable/conv_int8.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "runtime/kernels/portable/conv_int8_direct.h"
#include "runtime/kernels/portable/matmul_int8.h"
#include "runtime/kernels/portable/parallel.h"
#include "runtime/kernels/reference/conv_integer.h"

namespace ferrite {
namespace {

// Input channels below which a group-1 convolution's taps are fused into one window row.
constexpr int64_t kFusedTapsChannels = 8;
// Output points per chunk: 64 windows of K = 576 (64 channels, 3x3) are 72 KiB of int16.
constexpr int64_t kChunkPoints = 64;

// Row m of the weights minus WZ[m], over (kernel tap, channel of the group) in that order:
// the windows' order (pack_windows).
void pack_weights(const ConvIntegerArgs& g, int64_t kp, Int16Panel* p) {
  const ConvArgs& a = g.shape;
  const int64_t cg = a.c_in_group();
  p->resize(a.c_out, kp);
  for (int64_t m = 0; m < a.c_out; ++m) {
    int16_t* dst = p->line(m);
    const int32_t z = g.w_zero_points[static_cast<size_t>(m)];
    int16_t* tap = dst;
    for (int64_t j0 = 0; j0 < a.kernel[0]; ++j0)
      for (int64_t j1 = 0; j1 < a.kernel[1]; ++j1)
        for (int64_t j2 = 0; j2 < a.kernel[2]; ++j2, tap += cg)
          for (int64_t c = 0; c < cg; ++c)
            tap[c] = static_cast<int16_t>(g.w_at(a.w_offset + m * a.ws[0] + c * a.ws[1] +
                                                 j0 * a.ws[2] + j1 * a.ws[3] + j2 * a.ws[4]) -
                                          z);
    std::fill(tap, dst + kp, int16_t{0});
  }
}

// Channels [c0, c0 + count) of image n minus X's zero point, channels-last: element
// (i0, i1, i2, c) at ((i0 * in1 + i1) * in2 + i2) * stride + c - c0, and 0 in the `stride`
// - count values after each position's. A window's taps are then runs of values.
void pack_input(const ConvIntegerArgs& g, int64_t n, int64_t c0, int64_t count, int64_t stride,
                std::vector<int16_t>* xt) {
  const ConvArgs& a = g.shape;
  xt->resize(static_cast<size_t>(a.in_size() * stride));
  int16_t* out = xt->data();
  if (stride > count)
    for (int64_t i = 0; i < a.in_size(); ++i)
      std::fill(out + i * stride + count, out + (i + 1) * stride, int16_t{0});
  if (a.xs[1] == 1) {  // X channels-last already: a copy, position by position
    int16_t* at = out;
    const int64_t base = a.x_offset + n * a.xs[0] + c0;
    for (int64_t i0 = 0; i0 < a.in[0]; ++i0)
      for (int64_t i1 = 0; i1 < a.in[1]; ++i1)
        for (int64_t i2 = 0; i2 < a.in[2]; ++i2, at += stride) {
          const int64_t from = base + i0 * a.xs[2] + i1 * a.xs[3] + i2 * a.xs[4];
          for (int64_t c = 0; c < count; ++c)
            at[c] = static_cast<int16_t>(g.x_at(from + c) - g.x_zero_point);
        }
    return;
  }
  for (int64_t c = 0; c < count; ++c) {
    const int64_t base = a.x_offset + n * a.xs[0] + (c0 + c) * a.xs[1];
    int64_t at = c;
    for (int64_t i0 = 0; i0 < a.in[0]; ++i0)
      for (int64_t i1 = 0; i1 < a.in[1]; ++i1)
        for (int64_t i2 = 0; i2 < a.in[2]; ++i2, at += stride)
          out[at] = static_cast<int16_t>(g.x_at(base + i0 * a.xs[2] + i1 * a.xs[3] + i2 * a.xs[4]) -
                                         g.x_zero_point);
  }
}

// The windows of output points [p0, p1) over the packed input `xt`: one line per point, a
// run of Cg values per kernel tap (0 where the tap leaves X), in the weights' order.
void pack_windows(const ConvIntegerArgs& g, const int16_t* xt, int64_t p0, int64_t p1, int64_t kp,
                  Int16Panel* panel) {
  const ConvArgs& a = g.shape;
  const int64_t cg = a.c_in_group();
  const auto run = static_cast<size_t>(cg) * sizeof(int16_t);
  panel->resize(p1 - p0, kp);
  for (int64_t p = p0; p < p1; ++p) {
    const std::array<int64_t, 3> o = {p / (a.out[1] * a.out[2]), p / a.out[2] % a.out[1],
                                      p % a.out[2]};
    int16_t* dst = panel->line(p - p0);
    int16_t* tap = dst;
    for (int64_t j0 = 0; j0 < a.kernel[0]; ++j0) {
      const int64_t i0 = o[0] * a.stride[0] + j0 * a.dilation[0] - a.pad_begin[0];
      for (int64_t j1 = 0; j1 < a.kernel[1]; ++j1) {
        const int64_t i1 = o[1] * a.stride[1] + j1 * a.dilation[1] - a.pad_begin[1];
        for (int64_t j2 = 0; j2 < a.kernel[2]; ++j2, tap += cg) {
          const int64_t i2 = o[2] * a.stride[2] + j2 * a.dilation[2] - a.pad_begin[2];
          if (i0 >= 0 && i0 < a.in[0] && i1 >= 0 && i1 < a.in[1] && i2 >= 0 && i2 < a.in[2]) {
            const int16_t* from = xt + ((i0 * a.in[1] + i1) * a.in[2] + i2) * cg;
            if (cg < 8) {  // a few channels (an image's): no call per tap
              for (int64_t c = 0; c < cg; ++c) tap[c] = from[c];
            } else {
              std::memcpy(tap, from, run);
            }
          } else {
            std::fill(tap, tap + cg, int16_t{0});
          }
        }
      }
    }
    std::fill(tap, dst + kp, int16_t{0});
  }
}

// Y[n, group gi's channels, points [p0, p1)] from the packed weights and windows.
void multiply(const ConvIntegerArgs& g, const Int16Panel& weights, const Int16Panel& windows,
              int64_t n, int64_t gi, int64_t p0, int64_t p1, int64_t kp) {
  const ConvArgs& a = g.shape;
  const int64_t mg = a.c_out_group();
  int32_t block[16];
  for (int64_t m = gi * mg; m < (gi + 1) * mg; m += 4) {
    const int rows = static_cast<int>(std::min<int64_t>(4, (gi + 1) * mg - m));
    for (int64_t p = p0; p < p1; p += 4) {
      const int cols = static_cast<int>(std::min<int64_t>(4, p1 - p));
      int16_dot_block(weights.line(m), windows.line(p - p0), kp, kp, rows, cols, block);
      for (int c = 0; c < cols; ++c) {
        const int64_t q = p + c;
        const int64_t at = a.y_offset + n * a.ys[0] + q / (a.out[1] * a.out[2]) * a.ys[2] +
                           q / a.out[2] % a.out[1] * a.ys[3] + q % a.out[2] * a.ys[4];
        for (int r = 0; r < rows; ++r) g.store(at + (m + r) * a.ys[1], block[r * 4 + c], m + r);
      }
    }
  }
}

// The direct paths (conv_int8_direct.h) take group 1 and depthwise convolutions (one input
// and one output channel per group); other groupings gather windows (pack_windows).
bool direct(const ConvArgs& a) {
  return a.group == 1 || (a.c_in_group() == 1 && a.c_out_group() == 1);
}

// The direct paths' weights minus their zero points: group 1 in conv_int8_direct.h's
// blocks (with `fused`, one tap of the windows' (tap, channel) values), depthwise as
// [tap][mpad]; 0 past M and past Cg.
void pack_direct_weights(const ConvIntegerArgs& g, int64_t pairs, int64_t mpad, bool fused,
                         std::vector<int16_t>* w) {
  const ConvArgs& a = g.shape;
  const int64_t taps = fused ? 1 : a.kernel_size(), cg = a.c_in_group();
  const bool depthwise = a.group > 1;
  w->assign(static_cast<size_t>(taps * (depthwise ? 1 : 2 * pairs) * mpad), int16_t{0});
  for (int64_t m = 0; m < a.c_out; ++m) {
    const int32_t z = g.w_zero_points[static_cast<size_t>(m)];
    int64_t tap = 0;
    for (int64_t j0 = 0; j0 < a.kernel[0]; ++j0)
      for (int64_t j1 = 0; j1 < a.kernel[1]; ++j1)
        for (int64_t j2 = 0; j2 < a.kernel[2]; ++j2, ++tap)
          for (int64_t ci = 0; ci < cg; ++ci) {
            const int64_t t = fused ? 0 : tap, c = fused ? tap * cg + ci : ci;
            const auto v = static_cast<int16_t>(g.w_at(a.w_offset + m * a.ws[0] + ci * a.ws[1] +
                                                       j0 * a.ws[2] + j1 * a.ws[3] + j2 * a.ws[4]) -
                                                z);
            const int64_t b = kInt8ConvChannelBlock;
            const int64_t at =
                depthwise ? t * mpad + m
                          : ((m / b * taps + t) * pairs + c / 2) * 2 * b + m % b * 2 + c % 2;
            (*w)[static_cast<size_t>(at)] = v;
          }
  }
}

// Output points in order, their coordinates stepped without divisions (a division per
// coordinate and point cost more than a small convolution's products).
struct PointWalk {
  PointWalk(const ConvArgs& a, int64_t p)
      : a(a), o{p / (a.out[1] * a.out[2]), p / a.out[2] % a.out[1], p % a.out[2]} {}
  void next() {
    if (++o[2] < a.out[2]) return;
    o[2] = 0;
    if (++o[1] < a.out[1]) return;
    o[1] = 0;
    ++o[0];
  }
  const ConvArgs& a;
  std::array<int64_t, 3> o;
};

// The input rows of points [p0, p1)'s taps: into `xt` (pack_input, `stride` values per
// position) where the tap is inside X, else `zeros`.
void tap_rows(const ConvArgs& a, const int16_t* xt, int64_t stride, const int16_t* zeros,
              int64_t p0, int64_t p1, const int16_t** rows) {
  PointWalk w(a, p0);
  for (int64_t p = p0; p < p1; ++p, w.next()) {
    for (int64_t j0 = 0; j0 < a.kernel[0]; ++j0) {
      const int64_t i0 = w.o[0] * a.stride[0] + j0 * a.dilation[0] - a.pad_begin[0];
      for (int64_t j1 = 0; j1 < a.kernel[1]; ++j1) {
        const int64_t i1 = w.o[1] * a.stride[1] + j1 * a.dilation[1] - a.pad_begin[1];
        for (int64_t j2 = 0; j2 < a.kernel[2]; ++j2) {
          const int64_t i2 = w.o[2] * a.stride[2] + j2 * a.dilation[2] - a.pad_begin[2];
          const bool inside =
              i0 >= 0 && i0 < a.in[0] && i1 >= 0 && i1 < a.in[1] && i2 >= 0 && i2 < a.in[2];
          *rows++ = inside ? xt + ((i0 * a.in[1] + i1) * a.in[2] + i2) * stride : zeros;
        }
      }
    }
  }
}

template <typename T>
void store_channels(const int32_t* q, int64_t count, int64_t step, T* y) {
  if (step == 1) {  // channels-last: a loop the compiler vectorizes
    for (int64_t m = 0; m < count; ++m) y[m] = static_cast<T>(q[m]);
  } else {
    for (int64_t m = 0; m < count; ++m) y[m * step] = static_cast<T>(q[m]);
  }
}

// The finished values q[m] (m < M) of the output point at `w` into Y.
void store_point(const ConvIntegerArgs& g, int64_t n, const PointWalk& w, const int32_t* q) {
  const ConvArgs& a = g.shape;
  const int64_t at =
      a.y_offset + n * a.ys[0] + w.o[0] * a.ys[2] + w.o[1] * a.ys[3] + w.o[2] * a.ys[4];
  if (!g.requantize) {
    store_channels(q, a.c_out, a.ys[1], g.y + at);
  } else if (g.y_signed) {
    store_channels(q, a.c_out, a.ys[1], static_cast<int8_t*>(g.y8) + at);
  } else {
    store_channels(q, a.c_out, a.ys[1], static_cast<uint8_t*>(g.y8) + at);
  }
}

class PortableConvInteger : public PreparedExtern {
 public:
  PortableConvInteger(const ExternCall& call, const std::vector<ExternBuffer>& constants,
                      int threads)
      : call_(call), threads_(std::max(threads, 1)) {
    weights_constant_ = constants.size() > 3 && constants[1].data && constants[3].data;
  }

  void run(const ExternBuffer* inputs, const ExternBuffer* outputs) override {
    const ConvIntegerArgs g = parse_conv_integer(call_, inputs, outputs);
    const ConvArgs& a = g.shape;
    const int64_t points = a.out_size();
    if (a.n == 0 || a.c_out == 0 || points == 0) return;
    if (direct(a)) return run_direct(g);
    const int64_t kp = int16_padded(a.c_in_group() * a.kernel_size());
    if (!weights_packed_) pack_weights(g, kp, &weights_);
    weights_packed_ = weights_constant_;
    const int64_t chunks = (points + kChunkPoints - 1) / kChunkPoints;
    for (int64_t n = 0; n < a.n; ++n)
      for (int64_t gi = 0; gi < a.group; ++gi) {
        pack_input(g, n, gi * a.c_in_group(), a.c_in_group(), a.c_in_group(), &input_);
        parallel_parts(threads_, chunks, [&](int64_t chunk) {
          const int64_t p0 = chunk * kChunkPoints, p1 = std::min(points, p0 + kChunkPoints);
          Int16Panel windows;
          pack_windows(g, input_.data(), p0, p1, kp, &windows);
          multiply(g, weights_, windows, n, gi, p0, p1, kp);
        });
      }
  }

 private:
  void run_direct(const ConvIntegerArgs& g) {
    const ConvArgs& a = g.shape;
    const bool depthwise = a.group > 1;
    // A few input channels (an image's) over many taps: each point's window gathered into
    // one row (pack_windows) is one long tap, not many short ones.
    const bool fused = !depthwise && a.c_in < kFusedTapsChannels && a.kernel_size() > 1;
    const int64_t taps = fused ? 1 : a.kernel_size(), points = a.out_size();
    const int64_t mpad = int8_conv_channels_padded(a.c_out);
    const int64_t k = fused ? a.c_in * a.kernel_size() : a.c_in;  // values per tap
    const int64_t pairs = depthwise ? 0 : (k + 1) / 2;
    // Values per input position.
    const int64_t stride = depthwise ? mpad : fused ? a.c_in : 2 * pairs;
    const int64_t kp = int16_padded(k);  // the windows' line
    if (!weights_packed_) pack_direct_weights(g, pairs, mpad, fused, &direct_weights_);
    weights_packed_ = weights_constant_;
    // B and the multipliers per output channel, 0 in the padding.
    std::vector<int32_t> bias(static_cast<size_t>(mpad), 0);
    std::vector<float> mult(g.requantize ? static_cast<size_t>(mpad) : 0, 0.0f);
    for (int64_t m = 0; m < a.c_out; ++m) {
      if (g.b) bias[static_cast<size_t>(m)] = g.b[a.b_offset + m * a.b_stride];
      if (g.requantize) mult[static_cast<size_t>(m)] = g.multiplier[m * g.multiplier_stride];
    }
    const std::vector<int16_t> zeros(static_cast<size_t>(stride), 0);
    const int64_t chunks = (points + kChunkPoints - 1) / kChunkPoints;
    for (int64_t n = 0; n < a.n; ++n) {
      pack_input(g, n, 0, a.c_in, stride, &input_);
      parallel_parts(threads_, chunks, [&](int64_t chunk) {
        const int64_t p0 = chunk * kChunkPoints, p1 = std::min(points, p0 + kChunkPoints);
        std::vector<const int16_t*> rows(static_cast<size_t>((p1 - p0) * taps));
        std::vector<int32_t> sums(static_cast<size_t>((p1 - p0) * mpad));
        Int16Panel windows;
        if (fused) {
          pack_windows(g, input_.data(), p0, p1, kp, &windows);
          for (int64_t p = p0; p < p1; ++p)
            rows[static_cast<size_t>(p - p0)] = windows.line(p - p0);
        } else {
          tap_rows(a, input_.data(), stride, zeros.data(), p0, p1, rows.data());
        }
        if (depthwise) {
          int8_depthwise_points(rows.data(), p1 - p0, taps, direct_weights_.data(), mpad,
                                sums.data());
        } else {
          int8_conv_points(rows.data(), p1 - p0, taps, pairs, direct_weights_.data(), mpad,
                           sums.data());
        }
        int8_conv_finish(sums.data(), p1 - p0, mpad, bias.data(),
                         g.requantize ? mult.data() : nullptr, g.y_zero_point, g.type_lo, g.type_hi,
                         g.y_lo, g.y_hi, sums.data());
        PointWalk w(a, p0);
        for (int64_t p = p0; p < p1; ++p, w.next())
          store_point(g, n, w, sums.data() + (p - p0) * mpad);
      });
    }
  }

  const ExternCall& call_;
  int threads_;
  bool weights_constant_ = false, weights_packed_ = false;
  Int16Panel weights_;                   // the windows path's
  std::vector<int16_t> direct_weights_;  // the direct paths'
  std::vector<int16_t> input_;
};

}  // namespace

std::unique_ptr<PreparedExtern> prepare_portable_conv_integer(
    const ExternCall& call, const std::vector<ExternBuffer>& constants, int threads) {
  return std::make_unique<PortableConvInteger>(call, constants, threads);
}

}  // namespace ferrite
