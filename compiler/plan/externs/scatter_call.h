// The attributes of the ScatterElements and ScatterND externs (what they mean:
// runtime/kernels/reference/scatter.h).
#pragma once

#include <cstdint>
#include <optional>

#include "compiler/plan/externs/extern_op.h"
#include "compiler/plan/ops.h"

namespace ferrite {

struct ScatterCall {
  bool nd = false;   // ScatterND, else ScatterElements
  int64_t axis = 0;  // ScatterElements: the axis its indices index, in [0, rank of data)
  // How an update combines with the value it lands on (Sum, Prod, Max or Min); none: it
  // replaces it.
  std::optional<ReduceKind> reduction;

  ExternOp op() const { return nd ? ExternOp::ScatterND : ExternOp::ScatterElements; }
};

// ints "axis" (ScatterElements) and "reduction" (a ReduceKind, absent for none).
ExternAttrs encode(const ScatterCall& c);

// The call's attributes for data of rank `data_rank`. Throws ferrite::Error
// "<op>: invalid reduction <k>" for a reduction other than Sum, Prod, Max and Min, and
// "<op>: axis <a> out of range for data of rank <r>" for a ScatterElements whose axis is
// missing or outside [0, r). The op must be ScatterElements or ScatterND.
ScatterCall decode_scatter_call(const ExternCall& call, size_t data_rank);

}  // namespace ferrite
