// How a graph node carries its storage layout from the pass that chooses it
// (passes/choose_conv_layout.cc) to the lowering that allocates its output
// (lower/conv_ops.cc): the string attribute ferrite_layout on a Conv / ConvTranspose node.
// "channels_last": the output is stored [N, spatial..., C] and read through an NCHW view.
// Absent: NCHW.
//
// On the other nodes of a channels-last region (the ops between its convolutions), the
// attribute ferrite_store = "channels_last" says how to store an output that the lowering
// realizes (GraphLowering::apply_realize_policy: a narrow type such as a quantized uint8
// activation, or a value read several times): channels-last too, so that the kernel writing
// it and the convolutions and pools reading it all run along the contiguous channels. It
// decides no realization, only the order of one.
#pragma once

namespace ferrite {

inline constexpr const char* kLayoutAttr = "ferrite_layout";
inline constexpr const char* kChannelsLastLayout = "channels_last";
inline constexpr const char* kStoreAttr = "ferrite_store";

}  // namespace ferrite
