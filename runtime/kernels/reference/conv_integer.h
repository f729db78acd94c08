// The ConvInteger extern, defined by its reference implementation here: a Conv
// (runtime/kernels/reference/conv.h: the geometry, its ints and the output size) of 8-bit
// operands minus their zero points, summed exactly into int32:
//   Y[n, m, o] = B[m] + sum_{c < Cg, j < kernel, i inside X} (X[n, g*Cg + c, i] - XZ) *
//                                                            (W[m, c, j] - WZ[m])
// with i = o*stride + j*dilation - pad_begin; a tap outside X adds nothing (as if X held its
// zero point there, which is ONNX ConvInteger's padding).
// inputs = {X [N, C, in...], W [M, C / group, kernel...], XZ [1], WZ [M], optional B [M]}
// (WZ stride 0 for one value shared by every channel; B int32, QLinearConv's bias, added in
// int32 as onnxruntime adds it), outputs = {Y int32 [N, M, out...]}. X and XZ: uint8 or
// int8 (int "x_signed"), W and WZ: uint8 or int8 ("w_signed"); any strides; pads >= 0.
// The sums are stored modulo 2^32, as onnxruntime's int32 accumulators wrap.
//
// Requantizing (int "requantize" 1: QLinearConv), inputs = {X, W, XZ, WZ, B, M [M] float32,
// YZ [1]} and Y uint8 or int8 ("y_signed", YZ's type): each wrapped sum s becomes
//   q = round_half_to_even(float(s) * M[m]) + YZ, saturated into Y's type (NaN: YZ),
//   then clamped into [y_lo, y_hi] (ints inside the type's range),
// in float32, the lowering's requantization (lower/quant_common.h) step for step.
//
// Y must not overlap the inputs. No post-ops, no epilogue. parse_conv_integer is shared
// with the other backends so that they accept exactly the same calls.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "runtime/backend.h"
#include "runtime/kernels/reference/conv.h"

namespace ferrite {

struct ConvIntegerArgs {
  ConvArgs shape;  // geometry, strides and offsets (its float pointers stay null)
  const void* x = nullptr;
  const void* w = nullptr;
  int32_t* y = nullptr;  // Y int32 (not requantizing)
  bool x_signed = false, w_signed = false;
  int32_t x_zero_point = 0;
  std::vector<int32_t> w_zero_points;  // M
  const int32_t* b = nullptr;          // the bias (shape.b_offset, b_stride); null: none
  // Requantizing: Y's 8 bits, M[m] = multiplier[m * multiplier_stride], YZ and the ranges.
  bool requantize = false, y_signed = false;
  void* y8 = nullptr;
  const float* multiplier = nullptr;
  int64_t multiplier_stride = 0;
  float y_zero_point = 0, type_lo = 0, type_hi = 0, y_lo = 0, y_hi = 0;

  // acc + B[m], wrapped into int32.
  int32_t finish(int64_t acc, int64_t m) const {
    if (b) acc += b[shape.b_offset + m * shape.b_stride];
    return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(acc)));
  }

  // The requantized value of a finished sum, for output channel m.
  int32_t requantized(int32_t s, int64_t m) const {
    const float real = static_cast<float>(s) * multiplier[m * multiplier_stride];
    float q = std::nearbyint(real) + y_zero_point;
    q = std::isnan(q) ? y_zero_point : std::fmin(std::fmax(q, type_lo), type_hi);
    return static_cast<int32_t>(std::fmin(std::fmax(q, y_lo), y_hi));
  }
  // Stores the sum `acc` of output channel m at element i of Y: finished, requantized when
  // the call says so.
  void store(int64_t i, int64_t acc, int64_t m) const {
    const int32_t s = finish(acc, m);
    if (!requantize) {
      y[i] = s;
    } else if (y_signed) {
      static_cast<int8_t*>(y8)[i] = static_cast<int8_t>(requantized(s, m));
    } else {
      static_cast<uint8_t*>(y8)[i] = static_cast<uint8_t>(requantized(s, m));
    }
  }

  int32_t x_at(int64_t i) const {
    return x_signed ? static_cast<const int8_t*>(x)[i] : static_cast<const uint8_t*>(x)[i];
  }
  int32_t w_at(int64_t i) const {
    return w_signed ? static_cast<const int8_t*>(w)[i] : static_cast<const uint8_t*>(w)[i];
  }
};

// Checks the call (parse_conv_shapes, dtypes against the flags, the zero points, every view
// inside its buffer) and throws ferrite::Error "ConvInteger: ..." on any problem.
ConvIntegerArgs parse_conv_integer(const ExternCall& call, const ExternBuffer* inputs,
                                   const ExternBuffer* outputs);

// Direct loops, one output element at a time, in int64, stored as int32.
void reference_conv_integer(const ExternCall& call, const ExternBuffer* inputs,
                            const ExternBuffer* outputs);

}  // namespace ferrite
