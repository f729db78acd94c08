// The vectorized loops of the portable Conv and ConvTranspose (conv_f32.h), written once
// with Highway: the depthwise convolution, the im2col packing of the implicit GEMM, and
// ConvTranspose's col2im. They work on dense (contiguous) planes of one image (and group),
// with the geometry of a parsed call (ConvArgs, spatial dims padded to 3).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/kernels/portable/epilogue.h"
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

// Depthwise Conv (C / group == M / group == 1), channels [c0, c1) of one image: y [M, out] =
// a's bias + x [C, in] convolved per channel with w [M, kernel], then `post_ops` (an epilogue in
// the coordinates (channel, flattened output position) of this image; null: none) on each
// output row while it is in cache. Each input plane is first copied zero-padded, and split
// into `stride` phases along the innermost dim, so that every tap reads whole vectors of
// outputs. `scratch`: conv_depthwise_scratch_floats(a) floats, 64-byte aligned.
size_t conv_depthwise_scratch_floats(const ConvArgs& a);
void conv_depthwise_f32(const ConvArgs& a, const float* x, const float* w, float* y,
                        const Epilogue* post_ops, int64_t c0, int64_t c1, float* scratch);

// One image and group of a Conv as the B operand of the implicit GEMM (a GemmPackB): B is the
// im2col matrix, row (c, j) for input channel c < C / group and kernel position j (W's order),
// column o for output position o, holding x [c, o * stride + j * dilation - pad_begin] (zero
// in the padding); it is packed panel by panel, never materialized.
struct Im2ColSource {
  const ConvArgs* a;
  const float* x;  // the group's first input plane of the image
};
void conv_pack_im2col_f32(const void* source, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                          int64_t nr, float* dst);

// The implicit GEMM over windows, for convolutions with a kernel larger than 1x1: X is first
// copied (once per image) zero-padded and split into its stride phases along every spatial
// dim — channel c, phase (f0, f1, f2), position (r0, r1, r2) holds padded X at
// u[d] = r[d] * stride[d] + f[d]. Every row of the im2col matrix is then one contiguous run of
// the copy, at a fixed offset per row (channel and kernel position), so packing it is a plain
// copy, with no bounds to test. The price: output rows are len[d] apart in the GEMM's columns
// (column q = (o0 * len[1] + o1) * len[2] + o2), and the len[d] - out[d] columns between them
// are computed and dropped.
struct ConvWindows {
  std::array<int64_t, 3> len{};  // positions per phase: ceil(padded in[d] / stride[d])
  int64_t plane = 0;             // len[0] * len[1] * len[2]
  int64_t channel = 0;           // floats per channel of the copy (every phase)
  int64_t cols = 0;              // the GEMM's columns: the last output's column + 1
  std::vector<int64_t> offsets;  // per im2col row (c < C / group, kernel position)
};
// Whether the layout stays small: the copy's stride[d] phases of ceil(padded[d] / stride[d])
// positions take under twice the padded extent only where the stride is within it (a stride
// of 2^22 over 13 columns made 126M floats per channel, 6.8 s for a [3, 3, 8, 1] output).
// conv_windows needs it (its sizes are then bounded by the padded input's).
bool conv_windows_fit(const ConvArgs& a);
ConvWindows conv_windows(const ConvArgs& a);

// Copies channels [c0, c1) of one image's X [C, in] into the windows layout at `dst` (the
// copy of channel 0; conv_windows(a).channel floats per channel).
void conv_windows_fill_f32(const ConvArgs& a, const ConvWindows& w, const float* x, int64_t c0,
                           int64_t c1, float* dst);

// A GemmPackB: im2col row p, columns [j0, j0 + nc), is copy[offsets[p] + j0 ...].
struct WindowsSource {
  const ConvWindows* w;
  const float* copy;  // the group's first channel in the copy
};
void conv_pack_windows_f32(const void* source, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                           int64_t nr, float* dst);

// Rows [m0, m1) of one group's GEMM result c [M / group, w.cols] to y [M / group, out],
// dropping the columns between output rows, through `post_ops` (in the coordinates of y,
// shifted to the group; null: none).
void conv_windows_unpad_f32(const ConvArgs& a, const ConvWindows& w, const float* c,
                            const Epilogue* post_ops, int64_t m0, int64_t m1, float* y);

// Winograd F(2x2, 3x3) for 2-D 3x3 stride-1 undilated convolutions (conv_winograd_f32.cc):
// Y = A^T [U . V] A per 2x2 output tile, U the 4x4 transform of each 3x3 filter and V of each
// 4x4 input patch, the 16 elementwise products summed over channels as 16 GEMMs
// (U_xi [M/group, C/group] @ V_xi [C/group, tiles]): 2.25x fewer multiply-adds than direct.
bool conv_winograd_applies(const ConvArgs& a);
struct ConvWinograd {
  int64_t c = 0, m = 0;          // input and output channels per group
  int64_t out_h = 0, out_w = 0;  // output plane
  int64_t th = 0, twp = 0;       // tile rows; tiles per row padded to whole vectors
  int64_t lanes = 0;             // of the transforms' vectors (a power of two)
  ConvArgs fill;                 // X's copy: the windows of a stride-2 conv ...
  ConvWindows windows;           // ... 2 x 2 phases of th + 1 rows, twp + 1 columns
};
ConvWinograd conv_winograd(const ConvArgs& a);
// U of `group`: u[xi * (M/group * C/group) + m * C/group + c], xi = 4 i + k, from dense
// w [M, C/group, 3, 3] (computed in double).
void conv_winograd_weights(const ConvArgs& a, const float* w, int64_t group, float* u);
// V of channels [c0, c1) and tile rows [ty0, ty1), tb = (ty1 - ty0) * twp tiles:
// v[(xi * C + c) * tb + (ty - ty0) * twp + tx], from the copy (conv_windows_fill_f32 with
// t.fill and t.windows).
void conv_winograd_input_f32(const ConvWinograd& t, const float* copy, int64_t c0, int64_t c1,
                             int64_t ty0, int64_t ty1, float* v);
// The exact convolution of one group, for the outputs the transforms cannot give: next to
// an infinity or NaN, or where they overflow, a tile's sums cancel inf - inf and its outputs
// come out NaN even where the exact sum (the reference's) is finite or infinite.
struct WinogradExact {
  const ConvArgs* a = nullptr;
  const float* x = nullptr;  // the group's channels of the dense image [C/group, in]
  const float* w = nullptr;  // the group's dense filters [M/group, C/group, 3, 3]
};
// Recomputes the non-finite elements of row[0, n), group outputs (m, oy, ox0 + i), as the
// reference does (the sum in double; no bias, which the epilogue adds).
void conv_winograd_exact_f32(const WinogradExact& e, int64_t m, int64_t oy, int64_t ox0, int64_t n,
                             float* row);
// Output channels [m0, m1) of the group, tile rows [ty0, ty1), from the GEMMs' products
// mx[(xi * M/group + m) * tb + tile] into the group's y [M/group, out] through `post_ops`
// (in the group's coordinates; null: none). A row holding a non-finite value goes through
// conv_winograd_exact_f32 before the epilogue.
void conv_winograd_output_f32(const ConvWinograd& t, const float* mx, int64_t m0, int64_t m1,
                              int64_t ty0, int64_t ty1, const Epilogue* post_ops,
                              const WinogradExact& exact, float* y);

// ConvTranspose's col2im for one image and group: `col` has one row per (m, j) with
// m < M / group and j a kernel position, and one column per input position of the input rows
// [r0, r1) (row = (i0, i1), in[2] columns each); each value is added to y [M / group, out] at
// o = i * stride + j * dilation - pad_begin when that lies inside the output.
void conv_col2im_add_f32(const ConvArgs& a, const float* col, int64_t r0, int64_t r1, float* y);

}  // namespace ferrite
