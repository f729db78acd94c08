// The depthwise convolution of conv_simd_f32.h, compiled per target by foreach_target.h.
// Per channel: the input plane is copied zero-padded along the innermost dim and split into
// `stride` phases (phase q holds padded columns q, q + stride, ...), so output o's tap j
// reads phase (j * dilation) % stride at o + (j * dilation) / stride: every tap is a run of
// whole vectors of consecutive outputs, accumulated in registers four vectors at a time.
#include <algorithm>

#include "runtime/kernels/portable/conv_simd_f32.h"
#include "runtime/kernels/portable/keep_loop.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "runtime/kernels/portable/conv_depthwise_f32.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "runtime/kernels/portable/epilogue-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ferrite {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

// The padded, phase-split copy of one input plane: rows = in[0] * in[1] input rows, each
// `stride` phases of `width` floats; the output row buffer of `row` floats; with a stride,
// one padded input row before it is split. Each piece is rounded up to 64 floats, so that
// the next is aligned for any target.
struct Layout {
  int64_t stride, width, rows, row;
  int64_t du, dq;  // a step of the dilation: (phase, offset) = divmod(dilation, stride)
  static int64_t round64(int64_t n) { return (n + 63) / 64 * 64; }
  int64_t plane() const { return round64(rows * stride * width); }
  int64_t padded_row() const { return stride == 1 ? 0 : round64(stride * width); }
};

Layout DwLayout(const ConvArgs& a) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(DF()));
  Layout l;
  l.stride = a.stride[2];
  l.row = (a.out[2] + N - 1) / N * N;  // outputs computed in whole vectors
  l.width = l.row + (a.kernel[2] - 1) * a.dilation[2] / l.stride + 1;
  l.rows = a.in[0] * a.in[1];
  l.du = a.dilation[2] / l.stride;
  l.dq = a.dilation[2] % l.stride;
  return l;
}

size_t DepthwiseScratch(const ConvArgs& a) {
  const Layout l = DwLayout(a);
  return static_cast<size_t>(l.plane() + Layout::round64(l.row) + l.padded_row());
}

// dst[0:n] = src[0:n] for the short rows here (a memmove call costs as much as the copy).
HWY_INLINE void CopyFloats(const float* HWY_RESTRICT src, float* HWY_RESTRICT dst, int64_t n) {
  const DF d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    hn::StoreU(hn::LoadU(d, src + i), d, dst + i);
    FERRITE_KEEP_LOOP();
  }
  for (; i < n; ++i) {
    dst[i] = src[i];
    FERRITE_KEEP_LOOP();
  }
}

// Padded column t of an input row is x[t - pad_begin] (zero outside); it goes to phase
// t % stride at t / stride. `tmp`: l.padded_row() floats.
void FillPlane(const ConvArgs& a, const Layout& l, const float* x, float* plane, float* tmp) {
  const int64_t iw = a.in[2], pb = a.pad_begin[2], span = l.stride * l.width;
  const int64_t lo = std::min(std::max<int64_t>(pb, 0), span);
  const int64_t hi = std::min(std::max<int64_t>(pb + iw, lo), span);
  for (int64_t r = 0; r < l.rows; ++r) {
    const float* src = x + r * iw;
    float* dst = plane + r * span;
    float* padded = l.stride == 1 ? dst : tmp;
    for (int64_t t = 0; t < lo; ++t) {
      padded[t] = 0.0f;
      FERRITE_KEEP_LOOP();
    }
    CopyFloats(src + (lo - pb), padded + lo, hi - lo);
    for (int64_t t = hi; t < span; ++t) {
      padded[t] = 0.0f;
      FERRITE_KEEP_LOOP();
    }
    if (l.stride == 1) continue;
    int64_t u = 0;
#if HWY_TARGET != HWY_SCALAR
    if (l.stride == 2) {  // de-interleave whole vectors
      const DF d;
      const int64_t N = static_cast<int64_t>(hn::Lanes(d));
      for (; u + N <= l.width; u += N) {
        const VF v0 = hn::LoadU(d, tmp + 2 * u), v1 = hn::LoadU(d, tmp + 2 * u + N);
        hn::StoreU(hn::ConcatEven(d, v1, v0), d, dst + u);
        hn::StoreU(hn::ConcatOdd(d, v1, v0), d, dst + l.width + u);
      }
    }
#endif
    for (int64_t q = 0; q < l.stride; ++q)
      for (int64_t v = u; v < l.width; ++v) dst[q * l.width + v] = tmp[q + v * l.stride];
  }
}

// acc[0 : V) += w * the V vectors at src (V whole vectors of outputs).
template <int V>
HWY_INLINE void Taps(DF d, VF (&acc)[V], const float* HWY_RESTRICT src, float w) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const VF wv = hn::Set(d, w);
  for (int v = 0; v < V; ++v) acc[v] = hn::MulAdd(wv, hn::LoadU(d, src + v * N), acc[v]);
}

// Where an epilogue of unary post-ops that EpilogueTile applies (epilogue-inl.h) runs on the
// accumulators before they are stored: output channel c, the row's first element p.
struct TileEpilogue {
  const Epilogue* e = nullptr;
  int64_t c = 0, p = 0;
};

// Outputs [o, o + V * N) of output row (o0, o1) into row[o ...], with t's epilogue applied.
template <int V>
HWY_INLINE void OutputVectors(const ConvArgs& a, const Layout& l, const float* plane,
                              const float* w, float bias, int64_t o0, int64_t o1, int64_t o,
                              float* row, const TileEpilogue& t) {
  const DF d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d)), span = l.stride * l.width;
  VF tile[1][V];
  VF(&acc)[V] = tile[0];
  for (int v = 0; v < V; ++v) acc[v] = hn::Set(d, bias);
  for (int64_t j0 = 0; j0 < a.kernel[0]; ++j0) {
    const int64_t i0 = o0 * a.stride[0] + j0 * a.dilation[0] - a.pad_begin[0];
    if (i0 < 0 || i0 >= a.in[0]) continue;
    for (int64_t j1 = 0; j1 < a.kernel[1]; ++j1) {
      const int64_t i1 = o1 * a.stride[1] + j1 * a.dilation[1] - a.pad_begin[1];
      if (i1 < 0 || i1 >= a.in[1]) continue;
      const float* base = plane + (i0 * a.in[1] + i1) * span + o;
      const float* taps = w + (j0 * a.kernel[1] + j1) * a.kernel[2];
      // Tap j2 reads phase q at u: (q, u) = divmod(j2 * dilation, stride), stepped.
      int64_t q = 0, u = 0;
      for (int64_t j2 = 0; j2 < a.kernel[2]; ++j2) {
        Taps<V>(d, acc, base + q * l.width + u, taps[j2]);
        u += l.du;
        q += l.dq;
        if (q >= l.stride) {
          q -= l.stride;
          ++u;
        }
      }
    }
  }
  if (t.e) epi::EpilogueTile<1, V>(*t.e, t.c, t.p + o, tile);
  for (int v = 0; v < V; ++v) hn::Store(acc[v], d, row + o + v * N);
}

// Whether EpilogueTile can apply e to whole vectors of a row, the lanes past the row's end
// included: post-ops it admits that read no operand (whose rows end with the output's).
bool UnaryTileEpilogue(const Epilogue& e) {
  for (size_t k = 0; k < e.op_count; ++k)
    if (post_op_is_binary(e.ops[k].kind)) return false;
  return epi::EpilogueInRegisters(e);
}

void Depthwise(const ConvArgs& a, const float* x, const float* w, float* y,
               const Epilogue* post_ops, int64_t c0, int64_t c1, float* scratch) {
  const DF d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d)), ow = a.out[2];
  const Layout l = DwLayout(a);
  float* plane = scratch;
  float* row = scratch + l.plane();
  float* tmp = row + Layout::round64(l.row);
  const int64_t k = a.kernel_size();
  // Relu or Clip (mobilenet's) in registers; other epilogues over the finished row.
  const bool in_tile = post_ops && UnaryTileEpilogue(*post_ops);
  for (int64_t c = c0; c < c1; ++c) {
    FillPlane(a, l, x + c * a.in_size(), plane, tmp);
    const float bias = a.has_bias ? a.b[a.b_offset + c * a.b_stride] : 0.0f;
    for (int64_t o0 = 0; o0 < a.out[0]; ++o0) {
      for (int64_t o1 = 0; o1 < a.out[1]; ++o1) {
        const int64_t p = (o0 * a.out[1] + o1) * ow;
        const TileEpilogue t{in_tile ? post_ops : nullptr, c, p};
        int64_t o = 0;
        for (; o + 4 * N <= l.row; o += 4 * N)
          OutputVectors<4>(a, l, plane, w + c * k, bias, o0, o1, o, row, t);
        for (; o < l.row; o += N) OutputVectors<1>(a, l, plane, w + c * k, bias, o0, o1, o, row, t);
        if (post_ops && !in_tile) epi::EpilogueRow(*post_ops, c, p, row, ow);
        CopyFloats(row, y + c * a.out_size() + p, ow);
      }
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace ferrite
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ferrite {

HWY_EXPORT(DepthwiseScratch);
HWY_EXPORT(Depthwise);

size_t conv_depthwise_scratch_floats(const ConvArgs& a) {
  return HWY_DYNAMIC_DISPATCH(DepthwiseScratch)(a);
}

void conv_depthwise_f32(const ConvArgs& a, const float* x, const float* w, float* y,
                        const Epilogue* post_ops, int64_t c0, int64_t c1, float* scratch) {
  HWY_DYNAMIC_DISPATCH(Depthwise)(a, x, w, y, post_ops, c0, c1, scratch);
}

}  // namespace ferrite
#endif  // HWY_ONCE
