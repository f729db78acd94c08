// Weights stored in 2, 4 or 8 bits as the ONNX standard writes them (opset 21's blocked
// DequantizeLinear, what onnxruntime's 4-bit quantizer emits in its QDQ form) keep their bits:
// a MatMul whose B is DequantizeLinear of constant codes [K, N] (int2/uint2/int4/uint4/
// int8/uint8), blocked along K (axis 0, block_size a power of 2 in [16, 65536]), with
// constant float32 scales [ceil(K / block_size), N] and optional zero points of the codes'
// type, becomes com.microsoft MatMulNBits: the codes repacked into its layout ([N, blocks,
// blob], signed codes offset by 2^(bits - 1) with their zero points), so the product runs on
// the MatMulNBits extern, which decodes the codes as it multiplies, instead of on a float
// copy of the weights. The DequantizeLinear stays for any other reader.
#pragma once

#include "compiler/graph/graph.h"

namespace ferrite {

void fuse_block_weights(Graph& g);

}  // namespace ferrite
