// Folds a per-channel affine map that follows a Conv or ConvTranspose into its constant
// weights and bias (Intel's CPU backend for Inductor does the same before oneDNN sees the
// model): BatchNormalization at inference, and Mul / Add / Sub by a per-channel (or scalar)
// float32 constant, repeatedly (conv -> BN -> Mul -> Add becomes one conv). Only where the
// conv's output has no other reader, and W and B are float32 constants.
#pragma once

#include "compiler/graph/graph.h"

namespace ferrite {

void fold_conv_affine(Graph& g);

}  // namespace ferrite
