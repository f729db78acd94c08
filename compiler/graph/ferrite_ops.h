// The graph's own operators: nodes in the domain "ferrite" that graph passes create and
// the lowering takes (lower/graph_lowering.cc looks them up as "ferrite.<op>").
//
// ferrite.SegmentReduce (passes/fuse_message_passing.cc):
//   inputs  x [N, F], src [E], dst [E], weight [E, 1] or omitted, data [R, F],
//           scatter_shape or omitted, gather_shape or omitted (the shapes of the Expand
//           nodes of an expanded index, which must give [E, F])
//   attrs   reduction "add" | "max" | "min";  ferrite_unfused: the matched ONNX nodes as a
//           subgraph over the non-omitted inputs, lowered where the extern does not apply
//   output  out[dst[e], :] = reduce(out[dst[e], :], x[src[e], :] * weight[e]) over the
//           edges in order, from data: ScatterElements / ScatterND of Gather * weight
//
// ferrite.Attention (passes/fuse_attention.cc):
//   inputs  q [B, H, S, D], kt [B, H, D, T] (the keys transposed), v [B, H, T, Dv], mask
//           broadcasting to [B, H, S, T] or omitted
//   attrs   scale;  ferrite_unfused: the matched MatMul / Mul / Div / Add / Softmax / MatMul
//           nodes as a subgraph over the inputs, lowered where the shapes do not fit
//   output  softmax(scale * q @ kt + mask, last axis) @ v, [B, H, S, Dv]; a row whose scores
//           are all -inf is NaN, as Softmax makes it
//
// ferrite_epilogue (passes/fuse_extern_epilogues.cc), on a Conv, ConvTranspose, MatMul, Gemm or
// ferrite.SegmentReduce node: the nodes fused into the extern's epilogue, as a subgraph over
// y (the op's result) and the operands, which are appended to the node's inputs after its
// own; its one output is the node's output. The lowering lowers it on the extern's result and
// attaches what it computes (lower/extern_epilogue.cc).
//
// ferrite_saturate (passes/fold_qdq_pairs.cc), on a QLinearConv or QLinearMatMul node: ints
// [lo, hi], a range inside its output type that the requantized result is clamped to after
// it is saturated (an integer Clip absorbed: a Relu or Clip between QDQ pairs).
#pragma once

namespace ferrite {

inline constexpr const char* kFerriteDomain = "ferrite";
inline constexpr const char* kUnfusedAttr = "ferrite_unfused";
inline constexpr const char* kEpilogueAttr = "ferrite_epilogue";
inline constexpr const char* kSaturateAttr = "ferrite_saturate";

}  // namespace ferrite
