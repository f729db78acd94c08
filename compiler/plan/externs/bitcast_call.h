// The BitCast extern (what it means: runtime/kernels/reference/bitcast.h): each element's
// bytes reinterpreted as another type of the same size. It has no attributes: the types are
// its operands' (a backend prepares the call before it sees buffers, and needs none).
#pragma once

#include "compiler/plan/externs/extern_op.h"

namespace ferrite {

struct BitCastCall {
  ExternOp op() const { return ExternOp::BitCast; }
};

// No attributes.
ExternAttrs encode(const BitCastCall& c);
// The op must be BitCast, with no attributes.
BitCastCall decode_bitcast_call(const ExternCall& call);

}  // namespace ferrite
