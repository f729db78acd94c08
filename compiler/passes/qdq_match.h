// Shared by the QDQ passes (fuse_qdq.cc, fold_qdq_pairs.cc): recognizing onnxruntime's QDQ
// form before types are computed. What is known in the graph passes is the type of inputs
// and constants: a quantized tensor's type is its zero point's.
#pragma once

#include "compiler/graph/graph.h"

namespace ferrite {

// Whether n is the default-domain op `op`.
bool is_onnx_op(const Node* n, const char* op);

// uint8 or int8.
bool eight_bit(DType t);

// The 8-bit type of the tensor a DequantizeLinear reads or a QuantizeLinear writes, from its
// zero point (or the tensor's own known type; QuantizeLinear's default, uint8, without
// either); Undefined when it is not 8 bits.
DType quantized_type(const Node* n, const Value* tensor);

// A scalar (or one-element) float32 scale with an optional zero point of `q`'s type: a
// per-tensor DequantizeLinear / QuantizeLinear parameter pair.
bool per_tensor(const Node* n);

// The DequantizeLinear producing `v` from an 8-bit tensor, float32 out; null otherwise.
const Node* dequantize_of(const Value* v);

}  // namespace ferrite
