// The graph's own operators: nodes in the domain "ferrite" that graph passes create and
// the lowering takes (lower/graph_lowering.cc looks them up as "ferrite.<op>").
//
// ferrite.SegmentReduce (passes/fuse_message_passing.cc):
//   inputs  x [N, F], src [E], dst [E], weight [E, 1] or omitted, data [R, F], shape
//   attrs   reduction "add" | "max" | "min";  ferrite_unfused: the matched ONNX nodes as a
//           subgraph over the same inputs, lowered instead where the extern does not apply
//   output  ScatterElements(data, Expand(Unsqueeze(dst, 1), shape), Gather(x, src) * weight,
//           axis 0, reduction)
#pragma once

namespace ferrite {

inline constexpr const char* kFerriteDomain = "ferrite";
inline constexpr const char* kUnfusedAttr = "ferrite_unfused";

}  // namespace ferrite
