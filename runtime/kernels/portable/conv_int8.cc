#include "runtime/kernels/portable/conv_int8.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "runtime/kernels/portable/matmul_int8.h"
#include "runtime/kernels/portable/parallel.h"
#include "runtime/kernels/reference/conv_integer.h"

namespace ferrite {
namespace {

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

// The channels of group gi of image n minus X's zero point, channels-last: element
// (i0, i1, i2, c) at ((i0 * in1 + i1) * in2 + i2) * Cg + c. A window's taps are then runs of
// Cg values.
void pack_input(const ConvIntegerArgs& g, int64_t n, int64_t gi, std::vector<int16_t>* xt) {
  const ConvArgs& a = g.shape;
  const int64_t cg = a.c_in_group();
  xt->resize(static_cast<size_t>(a.in_size() * cg));
  int16_t* out = xt->data();
  if (a.xs[1] == 1) {  // X channels-last already: a copy, position by position
    int16_t* at = out;
    const int64_t base = a.x_offset + n * a.xs[0] + gi * cg;
    for (int64_t i0 = 0; i0 < a.in[0]; ++i0)
      for (int64_t i1 = 0; i1 < a.in[1]; ++i1)
        for (int64_t i2 = 0; i2 < a.in[2]; ++i2, at += cg) {
          const int64_t from = base + i0 * a.xs[2] + i1 * a.xs[3] + i2 * a.xs[4];
          for (int64_t c = 0; c < cg; ++c)
            at[c] = static_cast<int16_t>(g.x_at(from + c) - g.x_zero_point);
        }
    return;
  }
  for (int64_t c = 0; c < cg; ++c) {
    const int64_t base = a.x_offset + n * a.xs[0] + (gi * cg + c) * a.xs[1];
    int64_t at = c;
    for (int64_t i0 = 0; i0 < a.in[0]; ++i0)
      for (int64_t i1 = 0; i1 < a.in[1]; ++i1)
        for (int64_t i2 = 0; i2 < a.in[2]; ++i2, at += cg)
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
    const int64_t kp = int16_padded(a.c_in_group() * a.kernel_size());
    if (!weights_packed_) pack_weights(g, kp, &weights_);
    weights_packed_ = weights_constant_;
    const int64_t chunks = (points + kChunkPoints - 1) / kChunkPoints;
    for (int64_t n = 0; n < a.n; ++n)
      for (int64_t gi = 0; gi < a.group; ++gi) {
        pack_input(g, n, gi, &input_);
        parallel_parts(threads_, chunks, [&](int64_t chunk) {
          const int64_t p0 = chunk * kChunkPoints, p1 = std::min(points, p0 + kChunkPoints);
          Int16Panel windows;
          pack_windows(g, input_.data(), p0, p1, kp, &windows);
          multiply(g, weights_, windows, n, gi, p0, p1, kp);
        });
      }
  }

 private:
  const ExternCall& call_;
  int threads_;
  bool weights_constant_ = false, weights_packed_ = false;
  Int16Panel weights_;
  std::vector<int16_t> input_;
};

}  // namespace

std::unique_ptr<PreparedExtern> prepare_portable_conv_integer(
    const ExternCall& call, const std::vector<ExternBuffer>& constants, int threads) {
  return std::make_unique<PortableConvInteger>(call, constants, threads);
}

}  // namespace ferrite
