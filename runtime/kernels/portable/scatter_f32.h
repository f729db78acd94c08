// The portable ScatterElements extern (contract: runtime/kernels/reference/scatter.h) for
// float32 data and updates in dense row-major views: the same updates in the same order
// as the reference (so the same bits), with the offsets stepped along each row instead of
// recomputed per element. Everything else runs the reference.
#pragma once

#include "runtime/backend.h"

namespace ferrite {

void portable_scatter_elements(const ExternCall& call, const ExternBuffer* inputs,
                               const ExternBuffer* outputs);

}  // namespace ferrite
