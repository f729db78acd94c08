// Folds the QuantizeLinear / DequantizeLinear pairs that onnxruntime's static quantizer
// writes around the ops that need no arithmetic on the integers (as onnxruntime's QDQ
// transformers drop them): Q(f(DQ(q))) where DQ and Q are per tensor with the same constant
// scale (positive, normal) and zero point of the same 8-bit type becomes f on q itself,
//   f = nothing          -> q (an Identity)
//   f = Relu, Clip       -> q clamped to [Q(lo), Q(hi)] (an integer Clip; none when that
//                           covers the type): Q is monotone, so it commutes with min and max
//   f = MaxPool (no indices), GlobalMaxPool, Reshape, Transpose, Flatten, Squeeze,
//       Unsqueeze, Slice, Gather, Expand, Tile, DepthToSpace, SpaceToDepth
//                        -> f on the integers, the same attributes and other inputs
//   f = Concat of DQ(q_i), each with those parameters -> Concat of the q_i
// exactly: Q(DQ(q)) == q for every q (the division undoes the product to within an ulp,
// which rounding removes). The QuantizeLinear node is rewritten in place (its output keeps
// its name and readers); the DequantizeLinear and f stay for any other reader. An integer
// Clip (or Identity) of a QLinearConv / QLinearMatMul output that nothing else reads is then
// absorbed into it as its ferrite_saturate range (graph/ferrite_ops.h), so the requantized
// result is clamped in the same kernel.
#pragma once

#include "compiler/graph/graph.h"

namespace ferrite {

void fold_qdq_pairs(Graph& g);

}  // namespace ferrite
