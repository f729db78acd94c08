// Fuses what follows a Conv / ConvTranspose / MatMul / Gemm into the extern as post-ops
// (compiler/plan/post_ops.h; oneDNN's post-ops, Inductor's mkldnn _convolution_pointwise /
// _linear_pointwise): activations (Relu, Clip, LeakyRelu, Elu, Sigmoid, Tanh, HardSigmoid,
// HardSwish, Gelu, and the exported patterns of silu and exact gelu) and binary ops with a
// tensor that broadcasts to the output (a bias, a per-channel scale, a residual), in chains.
// A value is absorbed only when nothing else reads it. The node keeps its op type and holds
// the absorbed nodes as its ferrite_epilogue subgraph (graph/ferrite_ops.h), the operands
// appended to its inputs; torch's exact gelu becomes ONNX's Gelu there. The pass decides only
// which nodes go: what they compute is their lowering's, which builds the epilogue once
// shapes are known (lower/extern_epilogue.cc).
#pragma once

#include "compiler/graph/graph.h"

namespace ferrite {

void fuse_extern_epilogues(Graph& g);

}  // namespace ferrite
