// The MatMulInteger extern (what it means: runtime/kernels/reference/matmul_integer.h): an
// integer product of 8-bit operands minus their zero points, summed exactly into int32. It
// has no attributes.
#pragma once

#include "compiler/plan/externs/extern_op.h"

namespace ferrite {

struct MatMulIntegerCall {
  ExternOp op() const { return ExternOp::MatMulInteger; }
};

// Nothing.
ExternAttrs encode(const MatMulIntegerCall& c);
// The op must be MatMulInteger.
MatMulIntegerCall decode_matmul_integer_call(const ExternCall& call);

}  // namespace ferrite
