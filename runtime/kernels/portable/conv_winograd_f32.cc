// Winograd F(2x2, 3x3) for the portable Conv (conv_simd_f32.h), compiled per target by
// foreach_target.h: the weight transform (once, at prepare time), and the input and output
// transforms around the 16 GEMMs, vectorized across N horizontally adjacent tiles. The input
// is read from a windows copy with 2 x 2 phases (conv_windows_fill_f32), in which the
// same element of adjacent tiles (2 columns apart in X) is adjacent, so a tile vector is one
// load; two output vectors interleave into one row of 2N outputs.
//
//   V = B^T d B, U = G g G^T, Y = A^T (U . V) A, with
//   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1],
//   A^T = [1 1 1 0; 0 1 -1 -1].
#include <algorithm>
#include <cmath>

#include "runtime/kernels/portable/conv_simd_f32.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "runtime/kernels/portable/conv_winograd_f32.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "runtime/kernels/portable/epilogue-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ferrite {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;

int64_t TileLanes() {
  return static_cast<int64_t>(hn::Lanes(DF()));
}

// Calls f(d) with the widest float tag of at most `lanes` lanes (a power of two, at least
// 4), so that a plan prepared for a wider or narrower target still steps through whole
// padded tile rows. No 1- or 2-lane tags: in wasm their code made the depthwise
// convolutions (another file) 1.8x slower, presumably through the optimizer's choice of
// what to inline.
template <class F>
void WithLanes(int64_t lanes, F f) {
  const int64_t full = static_cast<int64_t>(hn::Lanes(DF()));
  switch (std::min(lanes, full)) {
    case 4:
      return f(hn::CappedTag<float, 4>());
    case 8:
      return f(hn::CappedTag<float, 8>());
    case 16:
      return f(hn::CappedTag<float, 16>());
    default:  // the target's own: fewer than 4 lanes, or `lanes` is all it has
      return f(DF());
  }
}

// Channels [c0, c1), tile rows [ty0, ty1): v[(xi * C + c) * tb + (ty - ty0) * twp + tx].
template <class D>
void InputWith(D d, const ConvWinograd& t, const float* copy, int64_t c0, int64_t c1, int64_t ty0,
               int64_t ty1, float* v) {
  using VF = hn::Vec<D>;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const ConvWindows& w = t.windows;
  const int64_t row = w.len[2], tb = (ty1 - ty0) * t.twp, xi_stride = t.c * tb;
  for (int64_t c = c0; c < c1; ++c) {
    // Phase (i % 2, j % 2) of patch element (i, j); its row i / 2 and column j / 2 further.
    const float* ph[2][2];
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) ph[i][j] = copy + c * w.channel + (i * 2 + j) * w.plane;
    for (int64_t ty = ty0; ty < ty1; ++ty) {
      float* out = v + c * tb + (ty - ty0) * t.twp;
      for (int64_t tx = 0; tx < t.twp; tx += N) {
        VF s[4][4];  // B^T d, row by row
        for (int j = 0; j < 4; ++j) {
          VF dj[4];
          for (int i = 0; i < 4; ++i)
            dj[i] = hn::LoadU(d, ph[i % 2][j % 2] + (ty + i / 2) * row + tx + j / 2);
          s[0][j] = hn::Sub(dj[0], dj[2]);
          s[1][j] = hn::Add(dj[1], dj[2]);
          s[2][j] = hn::Sub(dj[2], dj[1]);
          s[3][j] = hn::Sub(dj[1], dj[3]);
        }
        for (int k = 0; k < 4; ++k) {
          float* o = out + k * 4 * xi_stride + tx;
          hn::StoreU(hn::Sub(s[k][0], s[k][2]), d, o);
          hn::StoreU(hn::Add(s[k][1], s[k][2]), d, o + xi_stride);
          hn::StoreU(hn::Sub(s[k][2], s[k][1]), d, o + 2 * xi_stride);
          hn::StoreU(hn::Sub(s[k][1], s[k][3]), d, o + 3 * xi_stride);
        }
      }
    }
  }
}

void WinogradInput(const ConvWinograd& t, const float* copy, int64_t c0, int64_t c1, int64_t ty0,
                   int64_t ty1, float* v) {
  WithLanes(t.lanes, [&](auto d) { InputWith(d, t, copy, c0, c1, ty0, ty1, v); });
}

// Output channels [m0, m1) of tile rows [ty0, ty1) from mx[(xi * M + m) * tb + tile] into
// y [M, out] (the group's), through `post_ops` (in y's coordinates; null: none).
template <class D>
void OutputWith(D d, const ConvWinograd& t, const float* mx, int64_t m0, int64_t m1, int64_t ty0,
                int64_t ty1, const Epilogue* post_ops, const WinogradExact& exact, float* y) {
  using VF = hn::Vec<D>;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const int64_t tb = (ty1 - ty0) * t.twp, xi_stride = t.m * tb;
  const int64_t oh = t.out_h, ow = t.out_w;
  // Two output rows of a chunk of tiles, whole vectors (the epilogue computes on padding).
  constexpr int64_t kChunk = 128;
  static_assert(kChunk % (2 * vm::kMaxLanes) == 0, "chunks are whole vector pairs");
  HWY_ALIGN float rows[2][kChunk];
  for (int64_t m = m0; m < m1; ++m) {
    for (int64_t ty = ty0; ty < ty1; ++ty) {
      const float* in = mx + m * tb + (ty - ty0) * t.twp;
      for (int64_t x0 = 0; x0 < ow; x0 += kChunk) {  // output columns [x0, x0 + kChunk)
        const int64_t tx0 = x0 / 2, tx1 = std::min(t.twp, tx0 + kChunk / 2);
        for (int64_t tx = tx0; tx < tx1; tx += N) {
          VF s[2][4];  // A^T M, column by column
          for (int j = 0; j < 4; ++j) {
            VF mj[4];
            for (int i = 0; i < 4; ++i) mj[i] = hn::LoadU(d, in + (i * 4 + j) * xi_stride + tx);
            s[0][j] = hn::Add(hn::Add(mj[0], mj[1]), mj[2]);
            s[1][j] = hn::Sub(hn::Sub(mj[1], mj[2]), mj[3]);
          }
          for (int a = 0; a < 2; ++a) {
            const VF y0 = hn::Add(hn::Add(s[a][0], s[a][1]), s[a][2]);
            const VF y1 = hn::Sub(hn::Sub(s[a][1], s[a][2]), s[a][3]);
            hn::StoreInterleaved2(y0, y1, d, rows[a] + 2 * (tx - tx0));
          }
        }
        const int64_t n = std::min(kChunk, ow - x0);
        for (int a = 0; a < 2 && 2 * ty + a < oh; ++a) {
          const int64_t at = (2 * ty + a) * ow + x0;
          auto finite = hn::IsFinite(hn::Load(d, rows[a]));
          for (int64_t i = N; i < n; i += N)
            finite = hn::And(finite, hn::IsFinite(hn::Load(d, rows[a] + i)));
          if (!hn::AllTrue(d, finite))
            conv_winograd_exact_f32(exact, m, 2 * ty + a, x0, n, rows[a]);
          if (post_ops) epi::EpilogueRow(*post_ops, m, at, rows[a], n);
          std::copy(rows[a], rows[a] + n, y + m * oh * ow + at);
        }
      }
    }
  }
}

void WinogradOutput(const ConvWinograd& t, const float* mx, int64_t m0, int64_t m1, int64_t ty0,
                    int64_t ty1, const Epilogue* post_ops, const WinogradExact& exact, float* y) {
  WithLanes(t.lanes, [&](auto d) { OutputWith(d, t, mx, m0, m1, ty0, ty1, post_ops, exact, y); });
}

}  // namespace HWY_NAMESPACE
}  // namespace ferrite
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ferrite {

HWY_EXPORT(TileLanes);
HWY_EXPORT(WinogradInput);
HWY_EXPORT(WinogradOutput);

bool conv_winograd_applies(const ConvArgs& a) {
  return !a.transpose && a.in[0] == 1 && a.kernel[0] == 1 && a.kernel[1] == 3 && a.kernel[2] == 3 &&
         a.stride[1] == 1 && a.stride[2] == 1 && a.dilation[1] == 1 && a.dilation[2] == 1 &&
         a.out[1] >= 2 && a.out[2] >= 2;
}

ConvWinograd conv_winograd(const ConvArgs& a) {
  ConvWinograd t;
  t.c = a.c_in_group();
  t.m = a.c_out_group();
  t.out_h = a.out[1];
  t.out_w = a.out[2];
  t.th = (a.out[1] + 1) / 2;
  // The transforms' vectors: the target's, or narrower where that pads a tile row to at most
  // 3/4 as many tiles; the padding tiles go through the GEMMs too. A 7x7 output has 4 tiles
  // a row: 16 lanes (AVX-512) computed 4 times its tiles, and resnet18's 512-channel 7x7
  // convolutions took 8.3 ms each on one Zen 4 core instead of 5.1 with 4 lanes.
  const int64_t tw = (a.out[2] + 1) / 2;
  auto padded = [tw](int64_t n) { return (tw + n - 1) / n * n; };
  t.lanes = std::max<int64_t>(HWY_DYNAMIC_DISPATCH(TileLanes)(), 4);  // WithLanes: 4 or more
  for (int64_t n = t.lanes / 2; n >= 4; n /= 2)
    if (4 * padded(n) <= 3 * padded(t.lanes)) t.lanes = n;
  t.twp = padded(t.lanes);
  // The copy: padded X in 2 x 2 phases, th + 1 rows and twp + 1 columns per phase (the
  // patches of every tile row and of every tile vector, padding tiles included), taken as
  // the windows of a stride-2 convolution padded at the end to exactly that size.
  t.fill = a;
  t.fill.stride = {1, 2, 2};
  t.fill.pad_end[1] = 2 * (t.th + 1) - a.in[1] - a.pad_begin[1];
  t.fill.pad_end[2] = 2 * (t.twp + 1) - a.in[2] - a.pad_begin[2];
  t.fill.kernel = {1, 1, 1};  // (offsets unused: one entry per channel)
  t.windows = conv_windows(t.fill);
  return t;
}

void conv_winograd_weights(const ConvArgs& a, const float* w, int64_t group, float* u) {
  const int64_t mg = a.c_out_group(), cg = a.c_in_group(), per_xi = mg * cg;
  static const double kG[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  for (int64_t m = 0; m < mg; ++m) {
    for (int64_t c = 0; c < cg; ++c) {
      const float* g = w + ((group * mg + m) * cg + c) * 9;
      double gg[4][3];  // G g
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 3; ++j)
          gg[i][j] = kG[i][0] * g[j] + kG[i][1] * g[3 + j] + kG[i][2] * g[6 + j];
      for (int i = 0; i < 4; ++i)
        for (int k = 0; k < 4; ++k)
          u[(i * 4 + k) * per_xi + m * cg + c] =
              static_cast<float>(gg[i][0] * kG[k][0] + gg[i][1] * kG[k][1] + gg[i][2] * kG[k][2]);
    }
  }
}

void conv_winograd_input_f32(const ConvWinograd& t, const float* copy, int64_t c0, int64_t c1,
                             int64_t ty0, int64_t ty1, float* v) {
  HWY_DYNAMIC_DISPATCH(WinogradInput)(t, copy, c0, c1, ty0, ty1, v);
}

void conv_winograd_output_f32(const ConvWinograd& t, const float* mx, int64_t m0, int64_t m1,
                              int64_t ty0, int64_t ty1, const Epilogue* post_ops,
                              const WinogradExact& exact, float* y) {
  HWY_DYNAMIC_DISPATCH(WinogradOutput)(t, mx, m0, m1, ty0, ty1, post_ops, exact, y);
}

void conv_winograd_exact_f32(const WinogradExact& e, int64_t m, int64_t oy, int64_t ox0, int64_t n,
                             float* row) {
  const ConvArgs& a = *e.a;
  const int64_t cg = a.c_in_group(), ih = a.in[1], iw = a.in[2];
  for (int64_t i = 0; i < n; ++i) {
    if (std::isfinite(row[i])) continue;
    const int64_t ox = ox0 + i;
    double acc = 0;
    for (int64_t c = 0; c < cg; ++c) {
      const float* wc = e.w + (m * cg + c) * 9;
      for (int64_t ky = 0; ky < 3; ++ky) {
        const int64_t iy = oy + ky - a.pad_begin[1];
        if (iy < 0 || iy >= ih) continue;
        for (int64_t kx = 0; kx < 3; ++kx) {
          const int64_t ix = ox + kx - a.pad_begin[2];
          if (ix < 0 || ix >= iw) continue;
          acc += static_cast<double>(e.x[(c * ih + iy) * iw + ix]) * wc[ky * 3 + kx];
        }
      }
    }
    row[i] = static_cast<float>(acc);
  }
}

}  // namespace ferrite
#endif  // HWY_ONCE
