// The attributes of the TopK extern (what it means: runtime/kernels/reference/topk.h).
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/plan/externs/extern_op.h"

namespace ferrite {

struct TopKCall {
  int64_t axis = 0;  // in [0, rank of X)
  int64_t k = 0;     // in [0, X's size along axis]
  bool largest = true;

  ExternOp op() const { return ExternOp::TopK; }
};

// ints "axis", "k" and "largest" (0 or 1).
ExternAttrs encode(const TopKCall& c);

// The call's attributes for X of shape `x` (largest defaults to 1). Throws ferrite::Error
// "TopK: axis <a> out of range for X of rank <r>" and "TopK: k = <k> outside [0, n] ...".
// The op must be TopK.
TopKCall decode_topk_call(const ExternCall& call, const std::vector<int64_t>& x);

}  // namespace ferrite
