// The portable backend's ConvInteger extern (semantics in runtime/kernels/reference/
// conv_integer.h), on the int16 dot-product blocks of matmul_int8.h: the weights minus their
// zero points packed as int16 rows (a constant W with constant zero points once, by the first
// run); for each image and group the input minus its zero point as int16 channels-last,
// and for each chunk of output points their windows gathered from it (a run of the group's
// channels per kernel tap, 0 where the tap leaves the input), then 4x4 blocks of the output,
// each 16 int16 pair dot products over the window. Chunks are fixed by the call, so the
// result does not depend on the thread count.
#pragma once

#include <memory>
#include <vector>

#include "runtime/backend.h"

namespace ferrite {

// `call` must outlive the result.
std::unique_ptr<PreparedExtern> prepare_portable_conv_integer(
    const ExternCall& call, const std::vector<ExternBuffer>& constants, int threads);

}  // namespace ferrite
