// What the quantized ops share (quant_ops.cc, qlinear_ops.cc, contrib_quant_ops.cc): the
// range of an integer element type, a scale or zero point as a view of the tensor it
// quantizes, the two maps, and integer contractions (a matmul and a convolution summed
// exactly in int64 and written as int32, as onnxruntime's int32 accumulators do).
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/lower/lowering.h"

namespace ferrite {

struct QRange {
  double lo = 0, hi = 0;
};

// The range of a quantized element type (uint8, int8, uint16, int16; int32 too when
// `wide`): UnsupportedError naming the node and `what` for any other.
QRange quant_range(const LowerCtx& c, DType t, const char* what, bool wide = false);

// Input `i` (a scale or zero point of a tensor of size `x_size`) as a view of that size:
// per tensor (a scalar or one element), per axis (1-D, the size of dim `axis`), or blocked
// (`block` > 0: x's rank, ceil(size / block) along `axis`, x's sizes elsewhere). Throws
// naming the input for any other shape.
TensorBoxPtr quant_param_view(const LowerCtx& c, size_t i, const std::vector<int64_t>& x_size,
                              int axis, int64_t block);

// clamp(round_half_to_even(x / scale) + zero_point) into `r`, as int64: x and scale float
// (the division in float32, as onnxruntime does it), zero_point int64. NaN gives the zero
// point.
V quantize_value(KernelBuilder& b, V x, V scale, V zero_point, QRange r);
// (q - zero_point) * scale, float32: q and zero_point int64, scale float.
V dequantize_value(KernelBuilder& b, V q, V zero_point, V scale);

// The integer operand of a contraction: its values minus a zero point, loaded at an index
// of the operand (null zero point: none).
struct IntOperand {
  TensorBoxPtr x, zero_point;  // zero_point broadcasts to x's size (numpy rules)
};

// sum_k (a[..., m, k] - a_zp) * (b[..., k, n] - b_zp), exact in int64, as int32 (numpy
// matmul shapes: 1-D operands, broadcast batch dims), realized.
TensorBoxPtr integer_matmul(const LowerCtx& c, const IntOperand& a, const IntOperand& b);

// ONNX Conv's sum over (channel of the group, kernel taps) of (x - x_zp) * (w - w_zp)
// (w_zp scalar or per output channel), with Conv's attributes read from the node (group,
// kernel_shape, strides, dilations, pads, auto_pad); taps outside the input add 0.
// int32 [N, M, out...], realized.
TensorBoxPtr integer_conv(const LowerCtx& c, const IntOperand& x, const IntOperand& w);

}  // namespace ferrite
