// What the quantized ops share (quant_ops.cc, qlinear_ops.cc, contrib_quant_ops.cc): the
// range of an integer element type, a scale or zero point as a view of the tensor it
// quantizes, the two maps, and integer contractions (a matmul and a convolution summed
// exactly in int64 and written as int32, as onnxruntime's int32 accumulators do).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/lower/lowering.h"

namespace ferrite {

struct QRange {
  double lo = 0, hi = 0;
};

// The range of a quantized integer type (uint8, int8, uint16, int16, uint4, int4, uint2,
// int2; int32 too when `wide`): UnsupportedError naming the node and `what` for any other.
QRange quant_range(const LowerCtx& c, DType t, const char* what, bool wide = false);

// Input `i` (a scale or zero point of a tensor of size `x_size`) as a view of that size:
// per tensor (a scalar or one element), per axis (1-D, the size of dim `axis`), or blocked
// (`block` > 0: x's rank, ceil(size / block) along `axis`, x's sizes elsewhere). Throws
// naming the input for any other shape.
TensorBoxPtr quant_param_view(const LowerCtx& c, size_t i, const std::vector<int64_t>& x_size,
                              int axis, int64_t block);

// "[2,3]": a shape as the quantized ops' errors print it.
std::string shape_text(const std::vector<int64_t>& s);

// Input `i`, a scale or zero point of a matmul operand `x` quantized per tensor or per
// row (`rows`: a's, along dim -2) or column (b's, along dim -1): a scalar or one element, a
// 1-D tensor of that dim's size, or x's rank with size 1 along the other of the two (and
// x's sizes or 1 elsewhere). Returned broadcastable against x and the product alike; null
// when the input is omitted; throws naming the input for any other shape.
TensorBoxPtr line_param(const LowerCtx& c, size_t i, const TensorBoxPtr& x, bool rows);
// Input `i`, a per-tensor parameter (a scalar or one element), as a rank-0 view.
TensorBoxPtr scalar_param(const LowerCtx& c, size_t i);
// Input `i`, a convolution's weight parameter, per tensor or one per output channel, as a
// rank-`rank` view, [M, 1, ...]: of W's rank it broadcasts against W, of one less against
// the output [N, M, spatial...]; null when omitted.
TensorBoxPtr channel_param(const LowerCtx& c, size_t i, size_t rank, int64_t channels);

// clamp(round_half_to_even(x / scale) + zero_point) into `r`, as int64: x and scale float
// (the division in float32, as onnxruntime does it), zero_point int64. NaN gives the zero
// point. `then` (optional): a range the result is clamped to after that (an integer Clip).
V quantize_value(KernelBuilder& b, V x, V scale, V zero_point, QRange r,
                 const QRange* then = nullptr);
// (q - zero_point) * scale, float32: q and zero_point int64, scale float.
V dequantize_value(KernelBuilder& b, V q, V zero_point, V scale);

// y = saturate(round(acc * (((alpha * s1) * s2) / ys)) + yz) into yz's type: an int32 sum
// requantized by a float32 multiplier formed as onnxruntime forms it (s1, s2, ys and yz
// broadcast against acc; the multiplier folded at compile time when the scales are
// constants, so the kernel loads it). `then`: clamped to that range after (a node's
// ferrite_saturate).
TensorBoxPtr requantize(const LowerCtx& c, const TensorBoxPtr& acc, const TensorBoxPtr& s1,
                        const TensorBoxPtr& s2, const TensorBoxPtr& ys, const TensorBoxPtr& yz,
                        double alpha = 1, const QRange* then = nullptr);

// The float32 requantization multiplier ((alpha * s1) * s2) / ys, as onnxruntime forms it,
// broadcast of the three; folded into a constant when the scales are constants.
TensorBoxPtr requant_multiplier(const LowerCtx& c, const TensorBoxPtr& s1, const TensorBoxPtr& s2,
                                const TensorBoxPtr& ys, double alpha = 1);

// DynamicQuantizeLinear of float32 x: y_scale = (max(x, 0) - min(x, 0)) / 255 (1 when they
// are equal, as onnxruntime's GetQuantizationParameter; the ONNX reference gives 1/255
// then, which quantizes the all-zero x the same), y_zero_point = round(clamp(-min / y_scale,
// 0, 255)), y as QuantizeLinear's uint8. Scale and zero point are rank-0, realized.
struct DynamicQ {
  TensorBoxPtr y, scale, zero_point;
};
DynamicQ dynamic_quantize_u8(const LowerCtx& c, const TensorBoxPtr& x);

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
// kernel_shape, strides, dilations, pads, auto_pad); taps outside the input add 0; plus
// `bias` (int32 [M], QLinearConv's; null: none) in int32, as onnxruntime adds it.
// int32 [N, M, out...].
// What a convolution's sums are requantized by (QLinearConv): the multiplier
// (requant_multiplier: one value, or one per output channel), Y's zero point (8 bits), and
// the range the result is clamped to after saturating (the type's, or a ferrite_saturate).
struct ConvRequant {
  TensorBoxPtr multiplier, yz;
  QRange range;
};

// integer_conv's sums requantized as requantize() does it, clamped into rq.range, computed
// by one ConvInteger extern that writes 8-bit Y; null when the extern does not take the
// call (the caller then requantizes integer_conv's sums).
TensorBoxPtr requantized_conv(const LowerCtx& c, const IntOperand& x, const IntOperand& w,
                              const TensorBoxPtr& bias, const ConvRequant& rq);

TensorBoxPtr integer_conv(const LowerCtx& c, const IntOperand& x, const IntOperand& w,
                          const TensorBoxPtr& bias = nullptr);

}  // namespace ferrite
