// Highway implementation of conv_simd_f32.h, compiled per target by foreach_target.h. Rows
// along the innermost spatial dim are the vectors; with stride 1 there they are contiguous
// in both input and output, other strides take a scalar loop.
#include "runtime/kernels/portable/conv_simd_f32.h"

#include <algorithm>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "runtime/kernels/portable/conv_simd_f32.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ferrite {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

// y[0:n] += a * x[0:n]
HWY_INLINE void AxpyRow(float a, const float* HWY_RESTRICT x, float* HWY_RESTRICT y, int64_t n) {
  const DF d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const VF va = hn::Set(d, a);
  int64_t i = 0;
  for (; i + N <= n; i += N)
    hn::StoreU(hn::MulAdd(va, hn::LoadU(d, x + i), hn::LoadU(d, y + i)), d, y + i);
  for (; i < n; ++i) y[i] += a * x[i];
}

// y[0:n] += x[0:n]
HWY_INLINE void AddRow(const float* HWY_RESTRICT x, float* HWY_RESTRICT y, int64_t n) {
  const DF d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + N <= n; i += N)
    hn::StoreU(hn::Add(hn::LoadU(d, x + i), hn::LoadU(d, y + i)), d, y + i);
  for (; i < n; ++i) y[i] += x[i];
}

void AddBias(float* y, int64_t rows, int64_t cols, const float* bias, int64_t bias_stride) {
  const DF d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t r = 0; r < rows; ++r) {
    float* row = y + r * cols;
    const float b = bias[r * bias_stride];
    const VF vb = hn::Set(d, b);
    int64_t i = 0;
    for (; i + N <= cols; i += N) hn::StoreU(hn::Add(vb, hn::LoadU(d, row + i)), d, row + i);
    for (; i < cols; ++i) row[i] += b;
  }
}

void DepthwisePlane(const ConvArgs& a, const float* x, const float* w, float bias, float* y) {
  const int64_t ow = a.out[2], iw = a.in[2], s2 = a.stride[2];
  for (int64_t o0 = 0; o0 < a.out[0]; ++o0) {
    for (int64_t o1 = 0; o1 < a.out[1]; ++o1) {
      float* yrow = y + (o0 * a.out[1] + o1) * ow;
      std::fill(yrow, yrow + ow, bias);
      for (int64_t j0 = 0; j0 < a.kernel[0]; ++j0) {
        const int64_t i0 = o0 * a.stride[0] + j0 * a.dilation[0] - a.pad_begin[0];
        if (i0 < 0 || i0 >= a.in[0]) continue;
        for (int64_t j1 = 0; j1 < a.kernel[1]; ++j1) {
          const int64_t i1 = o1 * a.stride[1] + j1 * a.dilation[1] - a.pad_begin[1];
          if (i1 < 0 || i1 >= a.in[1]) continue;
          const float* xrow = x + (i0 * a.in[1] + i1) * iw;
          const float* taps = w + (j0 * a.kernel[1] + j1) * a.kernel[2];
          for (int64_t j2 = 0; j2 < a.kernel[2]; ++j2) {
            const int64_t off = j2 * a.dilation[2] - a.pad_begin[2];
            int64_t lo, hi;
            conv_valid_range(ow, iw, s2, off, &lo, &hi);
            if (lo == hi) continue;  // (then xrow + lo + off may lie outside the row)
            if (s2 == 1) {
              AxpyRow(taps[j2], xrow + lo + off, yrow + lo, hi - lo);
            } else {
              for (int64_t o = lo; o < hi; ++o) yrow[o] += taps[j2] * xrow[o * s2 + off];
            }
          }
        }
      }
    }
  }
}

void Col2Im(const ConvArgs& a, const float* col, int64_t r0, int64_t r1, float* y) {
  const int64_t iw = a.in[2], ow = a.out[2], s2 = a.stride[2];
  const int64_t cols = (r1 - r0) * iw, plane = a.out_size();
  const float* crow = col;
  for (int64_t m = 0; m < a.c_out_group(); ++m) {
    for (int64_t j0 = 0; j0 < a.kernel[0]; ++j0) {
      for (int64_t j1 = 0; j1 < a.kernel[1]; ++j1) {
        for (int64_t j2 = 0; j2 < a.kernel[2]; ++j2, crow += cols) {
          const int64_t off = j2 * a.dilation[2] - a.pad_begin[2];
          int64_t lo, hi;
          conv_valid_range(iw, ow, s2, off, &lo, &hi);
          if (lo == hi) continue;
          for (int64_t r = r0; r < r1; ++r) {
            const int64_t i0 = r / a.in[1], i1 = r % a.in[1];
            const int64_t o0 = i0 * a.stride[0] + j0 * a.dilation[0] - a.pad_begin[0];
            const int64_t o1 = i1 * a.stride[1] + j1 * a.dilation[1] - a.pad_begin[1];
            if (o0 < 0 || o0 >= a.out[0] || o1 < 0 || o1 >= a.out[1]) continue;
            float* yrow = y + m * plane + (o0 * a.out[1] + o1) * ow;
            const float* src = crow + (r - r0) * iw;
            if (s2 == 1) {
              AddRow(src + lo, yrow + lo + off, hi - lo);
            } else {
              for (int64_t i = lo; i < hi; ++i) yrow[i * s2 + off] += src[i];
            }
          }
        }
      }
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace ferrite
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ferrite {

HWY_EXPORT(AddBias);
HWY_EXPORT(DepthwisePlane);
HWY_EXPORT(Col2Im);

void conv_add_bias_f32(float* y, int64_t rows, int64_t cols, const float* bias,
                       int64_t bias_stride) {
  HWY_DYNAMIC_DISPATCH(AddBias)(y, rows, cols, bias, bias_stride);
}

void conv_depthwise_plane_f32(const ConvArgs& a, const float* x, const float* w, float bias,
                              float* y) {
  HWY_DYNAMIC_DISPATCH(DepthwisePlane)(a, x, w, bias, y);
}

void conv_col2im_add_f32(const ConvArgs& a, const float* col, int64_t r0, int64_t r1, float* y) {
  HWY_DYNAMIC_DISPATCH(Col2Im)(a, col, r0, r1, y);
}

}  // namespace ferrite
#endif  // HWY_ONCE
