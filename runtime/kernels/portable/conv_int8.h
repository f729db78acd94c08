// The portable backend's ConvInteger extern (semantics in runtime/kernels/reference/
// conv_integer.h). Group 1 and depthwise convolutions run direct (conv_int8_direct.h): the
// input minus its zero point as int16 channels-last once per image, the weights minus theirs
// packed once (a constant W with constant zero points, by the first run) — by pairs of
// input channels interleaved per output channel, or per channel for depthwise —, then for
// each output point its taps' input rows (a row of zeros where a tap leaves the input)
// against a vector of output channels, and the bias and requantization a vector at a time.
// Other groupings gather each chunk of output points' windows (a run of the group's
// channels per kernel tap) and take 4x4 blocks of int16 pair dot products (matmul_int8.h).
// Chunks are fixed by the call, so the result does not depend on the thread count.
#pragma once

#include <memory>
#include <vector>

#include "runtime/backend.h"

namespace ferrite {

// `call` must outlive the result.
std::unique_ptr<PreparedExtern> prepare_portable_conv_integer(
    const ExternCall& call, const std::vector<ExternBuffer>& constants, int threads);

}  // namespace ferrite
