// The vectorized inner loops of the portable Conv and ConvTranspose (conv_f32.h), written
// once with Highway. They work on dense (contiguous) planes of one image and group, with
// the geometry of a parsed call (ConvArgs, spatial dims padded to 3).
#pragma once

#include <algorithm>
#include <cstdint>

#include "runtime/kernels/reference/conv.h"

namespace ferrite {

// The indices t in [0, count) with 0 <= t * stride + offset < limit, as [*lo, *hi)
// (stride > 0). Used both ways: outputs that read inside the input (Conv), inputs that land
// inside the output (ConvTranspose).
inline void conv_valid_range(int64_t count, int64_t limit, int64_t stride, int64_t offset,
                             int64_t* lo, int64_t* hi) {
  int64_t l = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  int64_t h = limit - 1 - offset >= 0 ? (limit - 1 - offset) / stride + 1 : 0;
  l = std::min(l, count);
  h = std::max(l, std::min(h, count));
  *lo = l;
  *hi = h;
}

// y[r * cols + c] += bias[r * bias_stride] for r < rows, c < cols.
void conv_add_bias_f32(float* y, int64_t rows, int64_t cols, const float* bias,
                       int64_t bias_stride);

// One channel of a depthwise Conv (C / group == M / group == 1): y [out] = bias + x [in]
// convolved with the taps w [kernel].
void conv_depthwise_plane_f32(const ConvArgs& a, const float* x, const float* w, float bias,
                              float* y);

// ConvTranspose's col2im for one image and group: `col` has one row per (m, j) with
// m < M / group and j a kernel position, and one column per input position of the input rows
// [r0, r1) (row = (i0, i1), in[2] columns each); each value is added to y [M / group, out] at
// o = i * stride + j * dilation - pad_begin when that lies inside the output.
void conv_col2im_add_f32(const ConvArgs& a, const float* col, int64_t r0, int64_t r1, float* y);

}  // namespace ferrite
