// How a graph node carries its storage layout from the pass that chooses it
// (passes/choose_conv_layout.cc) to the lowering that allocates its output
// (lower/conv_ops.cc): the string attribute ferrite_layout on a Conv / ConvTranspose node.
// "channels_last": the output is stored [N, spatial..., C] and read through an NCHW view.
// Absent: NCHW.
#pragma once

namespace ferrite {

inline constexpr const char* kLayoutAttr = "ferrite_layout";
inline constexpr const char* kChannelsLastLayout = "channels_last";

}  // namespace ferrite
