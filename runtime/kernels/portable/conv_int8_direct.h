// The vector loops of the portable ConvInteger's direct paths (conv_int8.cc), compiled per
// target by foreach_target.h: output points of a channels-last convolution whose taps' input
// rows are given as pointers (an int16 row of X minus its zero point, or a row of zeros
// where the tap leaves X), summed exactly in int32 lanes, then finished (bias, and
// requantization when the call asks for it) a row of output channels at a time.
#pragma once

#include <cstdint>

namespace ferrite {

// Output channels are padded to a multiple of this (the widest vector's int32 lanes).
constexpr int64_t kInt8ConvChannelBlock = 16;

inline int64_t int8_conv_channels_padded(int64_t m) {
  return (m + kInt8ConvChannelBlock - 1) / kInt8ConvChannelBlock * kInt8ConvChannelBlock;
}

// Group 1. sums[p * mpad + m] = sum_{t < taps, k < 2 * pairs} rows[p * taps + t][k] *
// W(t, k, m) for p < points, m < mpad (a multiple of kInt8ConvChannelBlock), with W(t, k, m) =
// w[((m / B * taps + t) * pairs + k / 2) * 2B + m % B * 2 + k % 2], B = kInt8ConvChannelBlock:
// per block of B output channels, per tap and pair of input channels, the B channels'
// weights interleaved by pairs, so that each int32 lane takes one pair's two products at
// once (pmaddwd, i32x4.dot_i16x8_s, NEON's widening multiply-adds) and a block's weights
// are read in order. Rows hold 2 * pairs values (an odd channel count padded by 0).
void int8_conv_points(const int16_t* const* rows, int64_t points, int64_t taps, int64_t pairs,
                      const int16_t* w, int64_t mpad, int32_t* sums);

// Depthwise (one input and one output channel per group). sums[p * cpad + c] =
// sum_{t < taps} rows[p * taps + t][c] * w[t * cpad + c] for c < cpad; rows hold cpad values.
void int8_depthwise_points(const int16_t* const* rows, int64_t points, int64_t taps,
                           const int16_t* w, int64_t cpad, int32_t* sums);

// q[p * mpad + m] = sums[p * mpad + m] + bias[m] (wrapping) for p < points, m < mpad (a
// multiple of kInt8ConvChannelBlock); requantizing (mult non-null): then
// round_half_even(float(q) * mult[m]) + yz, NaN -> yz, clamped to [type_lo, type_hi] and
// then to [lo, hi] (ConvIntegerArgs::requantized). q may be sums.
void int8_conv_finish(const int32_t* sums, int64_t points, int64_t mpad, const int32_t* bias,
                      const float* mult, float yz, float type_lo, float type_hi, float lo, float hi,
                      int32_t* q);

// The same requantization (mult non-null; Y uint8, or int8 with y_signed) written as bytes:
// point p's channels m < count (<= mpad) at bytes[p][m], no byte past them touched.
void int8_conv_finish_bytes(const int32_t* sums, int64_t points, int64_t mpad, const int32_t* bias,
                            const float* mult, float yz, float type_lo, float type_hi, float lo,
                            float hi, bool y_signed, int64_t count, uint8_t* const* bytes);

}  // namespace ferrite
