// The portable ScatterElements extern (contract: runtime/kernels/reference/scatter.h) for
// float32 with out dense (data, updates and indices in any views: a broadcast constant, an
// expanded index): the same updates in the same order as the reference, so the same bits,
// with the offsets stepped along each row instead of recomputed per element. It stays one
// serial loop, about a nanosecond per update, and deterministic. Everything else runs the
// reference.
#pragma once

#include "runtime/backend.h"

namespace ferrite {

void portable_scatter_elements(const ExternCall& call, const ExternBuffer* inputs,
                               const ExternBuffer* outputs);

}  // namespace ferrite
