// Folds a per-column affine map that follows a MatMul or Gemm with constant float32 weights
// into them: Mul / Div by a constant that is one value per output column (or a scalar),
// Add / Sub, and BatchNormalization of a 2-D output (torch's Linear -> BatchNorm1d), in any
// chain. The scales go into the weights' columns; the shifts into Gemm's C, or, after a
// MatMul, into one Add of a constant row that stays (fuse_extern_epilogues makes it the
// bias post-op). Only where the output has no other reader, and the chain scales something
// (a bias Add alone is left to the epilogue).
#pragma once

#include "compiler/graph/graph.h"

namespace ferrite {

void fold_matmul_affine(Graph& g);

}  // namespace ferrite
