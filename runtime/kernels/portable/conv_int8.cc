#include "runtime/kernels/portable/conv_int8.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>

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
template <typename T>
void pack_input_typed(const ConvIntegerArgs& g, const T* x, int64_t n, int64_t c0, int64_t count,
                      int64_t stride, int16_t* out) {
  const ConvArgs& a = g.shape;
  const auto z = static_cast<int16_t>(g.x_zero_point);
  if (stride > count)
    for (int64_t i = 0; i < a.in_size(); ++i)
      std::fill(out + i * stride + count, out + (i + 1) * stride, int16_t{0});
  if (a.xs[1] == 1) {  // X channels-last already: position by position, a loop over channels
    int16_t* at = out;
    const T* base = x + a.x_offset + n * a.xs[0] + c0;
    for (int64_t i0 = 0; i0 < a.in[0]; ++i0)
      for (int64_t i1 = 0; i1 < a.in[1]; ++i1)
        for (int64_t i2 = 0; i2 < a.in[2]; ++i2, at += stride) {
          const T* from = base + i0 * a.xs[2] + i1 * a.xs[3] + i2 * a.xs[4];
          for (int64_t c = 0; c < count; ++c)
            at[c] = static_cast<int16_t>(static_cast<int16_t>(from[c]) - z);
        }
    return;
  }
  for (int64_t c = 0; c < count; ++c) {
    const T* base = x + a.x_offset + n * a.xs[0] + (c0 + c) * a.xs[1];
    int16_t* at = out + c;
    for (int64_t i0 = 0; i0 < a.in[0]; ++i0)
      for (int64_t i1 = 0; i1 < a.in[1]; ++i1) {
        const T* row = base + i0 * a.xs[2] + i1 * a.xs[3];
        for (int64_t i2 = 0; i2 < a.in[2]; ++i2, at += stride)
          *at = static_cast<int16_t>(static_cast<int16_t>(row[i2 * a.xs[4]]) - z);
      }
  }
}

void pack_input(const ConvIntegerArgs& g, int64_t n, int64_t c0, int64_t count, int64_t stride,
                std::vector<int16_t>* xt) {
  xt->resize(static_cast<size_t>(g.shape.in_size() * stride));
  if (g.x_signed) {
    pack_input_typed(g, static_cast<const int8_t*>(g.x), n, c0, count, stride, xt->data());
  } else {
    pack_input_typed(g, static_cast<const uint8_t*>(g.x), n, c0, count, stride, xt->data());
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

// The windows of output points [p0, p1) over the packed input `xt`: one line per point, a
// run of Cg values per kernel tap (0 where the tap leaves X), in the weights' order. Along
// the innermost kernel dim the taps of an undilated window are adjacent in `xt`: one copy
// of kernel[2] * Cg values where the whole run is inside X (an image's 7x7 window is 7
// copies of 21 values, not 49 of 3).
void pack_windows(const ConvIntegerArgs& g, const int16_t* xt, int64_t p0, int64_t p1, int64_t kp,
                  Int16Panel* panel) {
  const ConvArgs& a = g.shape;
  const int64_t cg = a.c_in_group(), k2 = a.kernel[2];
  const bool adjacent = a.dilation[2] == 1;
  panel->resize(p1 - p0, kp);
  PointWalk w(a, p0);
  for (int64_t p = p0; p < p1; ++p, w.next()) {
    int16_t* dst = panel->line(p - p0);
    int16_t* tap = dst;
    const int64_t first2 = w.o[2] * a.stride[2] - a.pad_begin[2];
    const bool run_inside = adjacent && first2 >= 0 && first2 + k2 <= a.in[2];
    for (int64_t j0 = 0; j0 < a.kernel[0]; ++j0) {
      const int64_t i0 = w.o[0] * a.stride[0] + j0 * a.dilation[0] - a.pad_begin[0];
      for (int64_t j1 = 0; j1 < a.kernel[1]; ++j1) {
        const int64_t i1 = w.o[1] * a.stride[1] + j1 * a.dilation[1] - a.pad_begin[1];
        const bool row_inside = i0 >= 0 && i0 < a.in[0] && i1 >= 0 && i1 < a.in[1];
        const int16_t* row = row_inside ? xt + (i0 * a.in[1] + i1) * a.in[2] * cg : nullptr;
        if (row_inside && run_inside) {
          std::memcpy(tap, row + first2 * cg, static_cast<size_t>(k2 * cg) * sizeof(int16_t));
          tap += k2 * cg;
          continue;
        }
        for (int64_t j2 = 0; j2 < k2; ++j2, tap += cg) {
          const int64_t i2 = first2 + j2 * a.dilation[2];
          if (row_inside && i2 >= 0 && i2 < a.in[2]) {
            std::memcpy(tap, row + i2 * cg, static_cast<size_t>(cg) * sizeof(int16_t));
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

// A 1x1 convolution's points [p0, p1) of image n: each point's input position, its C
// channels minus X's zero point, widened into `out` (`stride` values a point, 0 after the
// C), or `zeros` where the position leaves X. Per chunk, so that the widened values stay in
// cache rather than a whole int16 copy of X streaming through memory.
template <typename T>
void pack_points_typed(const ConvIntegerArgs& g, const T* x, int64_t n, int64_t p0, int64_t p1,
                       int64_t stride, const int16_t* zeros, int16_t* out, const int16_t** rows) {
  const ConvArgs& a = g.shape;
  const int64_t count = a.c_in, cs = a.xs[1];
  const auto z = static_cast<int16_t>(g.x_zero_point);
  PointWalk w(a, p0);
  for (int64_t p = p0; p < p1; ++p, w.next()) {
    int64_t i[3];
    bool inside = true;
    for (int d = 0; d < 3; ++d) {
      i[d] = w.o[static_cast<size_t>(d)] * a.stride[static_cast<size_t>(d)] -
             a.pad_begin[static_cast<size_t>(d)];
      inside = inside && i[d] >= 0 && i[d] < a.in[static_cast<size_t>(d)];
    }
    if (!inside) {
      rows[p - p0] = zeros;
      continue;
    }
    const T* from = x + a.x_offset + n * a.xs[0] + i[0] * a.xs[2] + i[1] * a.xs[3] + i[2] * a.xs[4];
    int16_t* to = out + (p - p0) * stride;
    if (cs == 1) {
      for (int64_t c = 0; c < count; ++c)
        to[c] = static_cast<int16_t>(static_cast<int16_t>(from[c]) - z);
    } else {
      for (int64_t c = 0; c < count; ++c)
        to[c] = static_cast<int16_t>(static_cast<int16_t>(from[c * cs]) - z);
    }
    std::fill(to + count, to + stride, int16_t{0});
    rows[p - p0] = to;
  }
}

void pack_points(const ConvIntegerArgs& g, int64_t n, int64_t p0, int64_t p1, int64_t stride,
                 const int16_t* zeros, int16_t* out, const int16_t** rows) {
  if (g.x_signed) {
    pack_points_typed(g, static_cast<const int8_t*>(g.x), n, p0, p1, stride, zeros, out, rows);
  } else {
    pack_points_typed(g, static_cast<const uint8_t*>(g.x), n, p0, p1, stride, zeros, out, rows);
  }
}

// The finished values q[(p - p0) * mpad + m] (m < M) of output points [p0, p1) into Y. Y
// channels-last: each point's M values in a row; else (NCHW) channel by channel, so that
// the points of one output row are written in order rather than a byte per channel plane.
template <typename T>
void store_chunk(const ConvArgs& a, int64_t n, int64_t p0, int64_t p1, const int32_t* q,
                 int64_t mpad, T* y) {
  int64_t offsets[kChunkPoints];
  PointWalk w(a, p0);
  for (int64_t p = p0; p < p1; ++p, w.next())
    offsets[p - p0] =
        a.y_offset + n * a.ys[0] + w.o[0] * a.ys[2] + w.o[1] * a.ys[3] + w.o[2] * a.ys[4];
  // Locals, not a's fields: a store of bytes may alias them, and the loops would reload them.
  const int64_t count = a.c_out, step = a.ys[1], points = p1 - p0;
  if (step == 1) {  // a loop the compiler vectorizes per point
    for (int64_t i = 0; i < points; ++i) {
      T* to = y + offsets[i];
      const int32_t* from = q + i * mpad;
      for (int64_t m = 0; m < count; ++m) to[m] = static_cast<T>(from[m]);
    }
    return;
  }
  for (int64_t m = 0; m < count; ++m) {
    T* plane = y + m * step;
    for (int64_t i = 0; i < points; ++i) plane[offsets[i]] = static_cast<T>(q[i * mpad + m]);
  }
}

void store_chunk(const ConvIntegerArgs& g, int64_t n, int64_t p0, int64_t p1, const int32_t* q,
                 int64_t mpad) {
  if (!g.requantize) {
    store_chunk(g.shape, n, p0, p1, q, mpad, g.y);
  } else if (g.y_signed) {
    store_chunk(g.shape, n, p0, p1, q, mpad, static_cast<int8_t*>(g.y8));
  } else {
    store_chunk(g.shape, n, p0, p1, q, mpad, static_cast<uint8_t*>(g.y8));
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
    // A 1x1 convolution widens each chunk's points as it goes (pack_points).
    const bool pointwise = !depthwise && a.kernel_size() == 1;
    const std::vector<int16_t> zeros(static_cast<size_t>(stride), 0);
    const int64_t chunks = (points + kChunkPoints - 1) / kChunkPoints;
    for (int64_t n = 0; n < a.n; ++n) {
      if (!pointwise) pack_input(g, n, 0, a.c_in, stride, &input_);
      parallel_parts(threads_, chunks, [&](int64_t chunk) {
        const int64_t p0 = chunk * kChunkPoints, p1 = std::min(points, p0 + kChunkPoints);
        std::vector<const int16_t*> rows(static_cast<size_t>((p1 - p0) * taps));
        // Every sum is written before it is read: no zero-filling.
        const std::unique_ptr<int32_t[]> sums(new int32_t[static_cast<size_t>((p1 - p0) * mpad)]);
        Int16Panel windows;
        if (pointwise) {
          windows.resize(p1 - p0, stride);
          pack_points(g, n, p0, p1, stride, zeros.data(), windows.line(0), rows.data());
        } else if (fused) {
          pack_windows(g, input_.data(), p0, p1, kp, &windows);
          for (int64_t p = p0; p < p1; ++p)
            rows[static_cast<size_t>(p - p0)] = windows.line(p - p0);
        } else {
          tap_rows(a, input_.data(), stride, zeros.data(), p0, p1, rows.data());
        }
        if (depthwise) {
          int8_depthwise_points(rows.data(), p1 - p0, taps, direct_weights_.data(), mpad,
                                sums.get());
        } else {
          int8_conv_points(rows.data(), p1 - p0, taps, pairs, direct_weights_.data(), mpad,
                           sums.get());
        }
        if (g.requantize && a.ys[1] == 1) {  // channels-last bytes: written as they finish
          uint8_t* bytes[kChunkPoints];
          PointWalk w(a, p0);
          for (int64_t p = p0; p < p1; ++p, w.next())
            bytes[p - p0] = static_cast<uint8_t*>(g.y8) + a.y_offset + n * a.ys[0] +
                            w.o[0] * a.ys[2] + w.o[1] * a.ys[3] + w.o[2] * a.ys[4];
          int8_conv_finish_bytes(sums.get(), p1 - p0, mpad, bias.data(), mult.data(),
                                 g.y_zero_point, g.type_lo, g.type_hi, g.y_lo, g.y_hi, g.y_signed,
                                 a.c_out, bytes);
          return;
        }
        int8_conv_finish(sums.get(), p1 - p0, mpad, bias.data(),
                         g.requantize ? mult.data() : nullptr, g.y_zero_point, g.type_lo, g.type_hi,
                         g.y_lo, g.y_hi, sums.get());
        store_chunk(g, n, p0, p1, sums.get(), mpad);
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
