// The attributes of the MatMul extern (what it means: runtime/kernels/reference/matmul.h).
#pragma once

#include "compiler/plan/externs/extern_op.h"

namespace ferrite {

struct MatMulCall {
  double alpha = 1;  // C = alpha * A @ B (Gemm's alpha), applied before the post-ops

  ExternOp op() const { return ExternOp::MatMul; }
};

// floats "alpha".
ExternAttrs encode(const MatMulCall& c);
// alpha defaults to 1. The op must be MatMul.
MatMulCall decode_matmul_call(const ExternCall& call);

}  // namespace ferrite
