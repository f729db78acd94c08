// The MatMulInteger extern (what it means: runtime/kernels/reference/matmul_integer.h): an
// integer product of 8-bit operands minus their zero points, summed exactly into int32. Its
// attributes say the operands' types (a backend prepares the call before it sees buffers).
#pragma once

#include "compiler/plan/externs/extern_op.h"

namespace ferrite {

struct MatMulIntegerCall {
  bool a_signed = false;  // A (and its zero point) int8, else uint8
  bool b_signed = false;  // B (and its zero points) int8, else uint8

  ExternOp op() const { return ExternOp::MatMulInteger; }
};

// ints "a_signed", "b_signed" (0 or 1).
ExternAttrs encode(const MatMulIntegerCall& c);
// Both default to 0; another value is an error. The op must be MatMulInteger.
MatMulIntegerCall decode_matmul_integer_call(const ExternCall& call);

}  // namespace ferrite
