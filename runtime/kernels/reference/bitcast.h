// The BitCast extern, defined by its reference implementation here:
//   Y[i...] = the bytes of X[i...] as Y's type
// inputs = {X}, outputs = {Y}: views of one shape, any strides, whose element types have
// the same size in memory, at least one byte and not strings (the lowering sends only
// reinterpretations that involve a float type: integer ones are loads and stores). Y must
// not overlap X. Every backend runs this function.
#pragma once

#include "runtime/backend.h"

namespace ferrite {

void reference_bitcast(const ExternCall& call, const ExternBuffer* inputs,
                       const ExternBuffer* outputs);

}  // namespace ferrite
