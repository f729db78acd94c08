#include "compiler/plan/externs/matmul_integer_call.h"

#include "compiler/plan/error.h"
#include "compiler/plan/plan.h"

namespace ferrite {

ExternAttrs encode(const MatMulIntegerCall& /*c*/) {
  return {};
}

MatMulIntegerCall decode_matmul_integer_call(const ExternCall& call) {
  if (call.op != ExternOp::MatMulInteger)
    fail("extern '", extern_op_name(call.op), "' is not a MatMulInteger");
  return {};
}

}  // namespace ferrite
