// Turns onnxruntime's QDQ form of a quantized product into one quantized node, as its QDQ
// transformers do: DequantizeLinear (per tensor) of the input and DequantizeLinear of
// constant 8-bit weights (per tensor, or per output channel: Conv's axis 0, MatMul's last)
// into a Conv (with an optional int32 bias, DequantizeLinear'd by x_scale * w_scale with zero
// point 0, as quantizers write it) or a 2-D-weight MatMul, whose output only a per-tensor
// QuantizeLinear into 8 bits reads, become QLinearConv / QLinearMatMul, which run as int8
// products (MatMulInteger: oneDNN's VNNI matmul natively). The DequantizeLinears stay for
// any other reader. The rest of a QDQ graph runs as written: dequantize, float32, quantize.
#pragma once

#include "compiler/graph/graph.h"

namespace ferrite {

void fuse_qdq(Graph& g);

}  // namespace ferrite
