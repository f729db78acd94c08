// The Conv and ConvTranspose externs, defined by their reference implementations here.
// Their attributes (a ConvCall: compiler/plan/externs/conv_call.h) are the ints below.
//
// Operands: float32 TensorRefs with any strides, k = rank - 2 spatial dims, 1 <= k <= 3;
//   inputs = {X [N, C, in...], W, optional B [M]}, outputs = {Y [N, M, out...]};
//   Y must not overlap X, W or B.
// ints: "group" (default 1, divides C and M); per spatial dim d < k: "stride<d>" and
//   "dilation<d>" (default 1, > 0), "pad_begin<d>" and "pad_end<d>" (default 0).
// With G = group, Cg = C / G, Mg = M / G, g = m / Mg, span[d] = (kernel[d] - 1) * dilation[d] + 1:
//
// Conv: W [M, Cg, kernel...], pads >= 0,
//   Y[n, m, o] = B[m] + sum_{c < Cg, j < kernel} X[n, g*Cg + c, o*stride + j*dilation - pad_begin]
//                                                * W[m, c, j]
//   where X outside `in` is zero (the padding), and
//   out[d] = (in[d] + pad_begin[d] + pad_end[d] - span[d]) / stride[d] + 1 (floor, >= 0).
//
// ConvTranspose: W [C, Mg, kernel...], the adjoint of Conv: every X[n, g*Cg + c, i] adds
//   X * W[g*Cg + c, m - g*Mg, j] to the full output at t = i*stride + j*dilation, and Y is the
//   full output cropped by the pads, plus the bias:
//   Y[n, m, o] = B[m] + sum_{c, i, j : i*stride + j*dilation = o + pad_begin} X[...] * W[...]
//   out[d] = stride[d] * (in[d] - 1) + span[d] - pad_begin[d] - pad_end[d] (>= 0).
//   Pads may be negative here: ONNX's output_padding, or an output_shape larger than the full
//   output, lengthen the output at the end (a negative pad_end), where only the bias lands.
//
// parse_conv is shared with the other backends so that they accept exactly the same calls.
#pragma once

#include <array>
#include <cstdint>

#include "runtime/backend.h"

namespace ferrite {

// A call's geometry with the spatial dims padded to 3 (leading dims of size 1, kernel 1,
// stride 1, no padding), so 1-D, 2-D and 3-D convolutions share one code path.
struct ConvArgs {
  bool transpose = false;
  bool integer = false;  // ConvInteger (conv_integer.h): the pointers below stay null
  int64_t n = 0, c_in = 0, c_out = 0, group = 1;
  std::array<int64_t, 3> in{}, out{}, kernel{}, stride{}, dilation{}, pad_begin{}, pad_end{};
  // Element strides of the 5-D views X [N, C, in], W [M or C, Cg or Mg, kernel] and
  // Y [N, M, out]; B (input 2, ConvInteger's 4) is (b_offset, b_stride).
  std::array<int64_t, 5> xs{}, ws{}, ys{};
  int64_t x_offset = 0, w_offset = 0, y_offset = 0, b_offset = 0, b_stride = 0;
  const float* x = nullptr;  // buffer bases (null before the buffers are known)
  const float* w = nullptr;
  const float* b = nullptr;  // null without a bias
  float* y = nullptr;
  bool has_bias = false;

  int64_t c_in_group() const { return c_in / group; }
  int64_t c_out_group() const { return c_out / group; }
  int64_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  const char* op() const { return integer ? "ConvInteger" : transpose ? "ConvTranspose" : "Conv"; }
};

// Checks what a call (op Conv, ConvTranspose or ConvInteger) fixes by itself: operand
// counts, ranks, the attributes (decode_conv_call), shapes against them (ConvInteger's zero
// points: conv_integer.h). Throws ferrite::Error "Conv: ..." /
// "ConvTranspose: ..." on any problem. Leaves the pointers null; backends size their scratch
// memory from it at prepare time.
ConvArgs parse_conv_shapes(const ExternCall& call);

// parse_conv_shapes plus the buffers: dtypes and every view inside its buffer.
ConvArgs parse_conv(const ExternCall& call, const ExternBuffer* inputs,
                    const ExternBuffer* outputs);

// Y[n, m, o] before the post-ops (bias included), as reference_conv computes it: the sum over
// the taps inside X (padding adds no term: 0 times an infinite or NaN weight is none), in
// double, rounded once. `a` holds the buffers (parse_conv).
float conv_output_at(const ConvArgs& a, int64_t n, int64_t m, const std::array<int64_t, 3>& o);

// Both ops (by call.op): direct loops, one output element at a time, accumulating in double.
void reference_conv(const ExternCall& call, const ExternBuffer* inputs,
                    const ExternBuffer* outputs);

}  // namespace ferrite
