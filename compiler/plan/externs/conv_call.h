// The attributes of the Conv, ConvTranspose and ConvInteger externs (what they mean:
// runtime/kernels/reference/conv.h and conv_integer.h). The compiler resolves every ONNX attribute
// (auto_pad, output_shape, output_padding, kernel_shape) into these, so no backend does ONNX logic.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/plan/externs/extern_op.h"

namespace ferrite {

struct ConvCall {
  bool transpose = false;  // ConvTranspose
  int64_t group = 1;
  // One entry per spatial dim (1 to 3).
  std::vector<int64_t> stride, dilation, pad_begin, pad_end;

  ExternOp op() const { return transpose ? ExternOp::ConvTranspose : ExternOp::Conv; }
};

// Bound on every size, stride, dilation and |pad| of a convolution: products of two stay
// below 2^60, so the index arithmetic of every backend is free of overflow without checks.
constexpr int64_t kMaxConvExtent = int64_t{1} << 30;

// ints "group", and per spatial dim d "stride<d>", "dilation<d>", "pad_begin<d>",
// "pad_end<d>"; defaults (group 1, stride and dilation 1, pads 0) are written too.
ExternAttrs encode(const ConvCall& c);

// The call's attributes for `spatial` spatial dims (absent ones take their defaults).
// Throws ferrite::Error "<op>: <key> = <v> is out of range [lo, 2^30)" unless group,
// strides and dilations are in [1, 2^30) and pads in [0, 2^30) (ConvTranspose: (-2^30,
// 2^30), a negative pad lengthening the output). The op must be Conv, ConvTranspose or
// ConvInteger (whose geometry is a Conv's).
ConvCall decode_conv_call(const ExternCall& call, size_t spatial);

// ConvInteger: a Conv's geometry over 8-bit operands, and their types; optionally its sums
// requantized into 8 bits (QLinearConv's output, runtime/kernels/reference/conv_integer.h).
struct ConvIntegerCall {
  ConvCall conv;          // transpose false
  bool x_signed = false;  // X (and its zero point) int8, else uint8
  bool w_signed = false;  // W (and its zero points) int8, else uint8
  bool requantize = false;
  bool y_signed = false;         // requantize: Y (and its zero point) int8, else uint8
  int64_t y_lo = 0, y_hi = 255;  // requantize: the range Y is clamped to after saturating

  ExternOp op() const { return ExternOp::ConvInteger; }
};

// The Conv's ints plus "x_signed" and "w_signed" (0 or 1); with requantize, "requantize" 1,
// "y_signed", "y_lo" and "y_hi".
ExternAttrs encode(const ConvIntegerCall& c);
// decode_conv_call's checks, and the flags (default 0; another value than 0 or 1 is an
// error); y_lo and y_hi default to Y's type's range and must lie inside it. The op must be
// ConvInteger.
ConvIntegerCall decode_conv_integer_call(const ExternCall& call, size_t spatial);

}  // namespace ferrite
