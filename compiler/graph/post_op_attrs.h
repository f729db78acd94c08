// How a graph node carries a fused epilogue (compiler/plan/post_ops.h) from the pass that
// fuses it (passes/fuse_extern_epilogues.cc) to the lowering that emits the extern: four
// attributes on the Conv / ConvTranspose / MatMul / Gemm node,
//   ferrite_post_ops    strings, the kinds in order ("relu", "add", ...: post_op_name)
//   ferrite_post_alpha  floats, ferrite_post_beta floats (one per post-op)
//   ferrite_post_input  ints, the node input holding a binary post-op's operand (else -1)
// The operands are appended to the node's inputs, after the op's own.
#pragma once

#include <vector>

#include "compiler/graph/graph.h"
#include "compiler/plan/post_ops.h"

namespace ferrite {

// The node's post-ops (input = the node input index of the operand); empty without them.
// Throws ferrite::Error naming the node when the attributes are inconsistent.
std::vector<PostOp> read_post_op_attrs(const Node& n);
void write_post_op_attrs(Node* n, const std::vector<PostOp>& post);

}  // namespace ferrite
