// Attention written as plain ops, as torch's exporter and hand-built encoders write it:
//   S = MatMul(Q, Kt)                 Q [B, H, S, D], Kt [B, H, D, T]
//   S = Mul(S, c) or Div(S, c)        any number of them, c a float32 scalar constant
//   S = Add(S, M)                     at most one; M float32, each dim 1 or the scores'
//   P = Softmax(S) over the last axis
//   Y = MatMul(P, V)                  V [B, H, T, Dv]
// (scalar Mul/Div on Q or Kt before the first MatMul count as scale too) becomes one
// ferrite.Attention(Q, Kt, V[, M]) node (graph/ferrite_ops.h) with scale = the product of the
// constants, which the lowering makes one fused extern (lower/fused_attention.h): no [S x T]
// scores per head in memory. Only where every intermediate is read by the next node alone
// and is no graph output; whether the shapes fit (float32, rank 4, equal batch and heads, a
// mask that broadcasts to the scores) is decided when they are known, at lowering, which
// otherwise lowers the matched nodes as they were (the node's ferrite_unfused subgraph).
#pragma once

#include "compiler/graph/graph.h"

namespace ferrite {

void fuse_attention(Graph& g);

}  // namespace ferrite
