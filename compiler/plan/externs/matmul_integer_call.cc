#include "compiler/plan/externs/matmul_integer_call.h"

#include "compiler/plan/error.h"
#include "compiler/plan/plan.h"

namespace ferrite {

ExternAttrs encode(const MatMulIntegerCall& c) {
  ExternAttrs a;
  a.ints["a_signed"] = c.a_signed ? 1 : 0;
  a.ints["b_signed"] = c.b_signed ? 1 : 0;
  return a;
}

MatMulIntegerCall decode_matmul_integer_call(const ExternCall& call) {
  if (call.op != ExternOp::MatMulInteger)
    fail("extern '", extern_op_name(call.op), "' is not a MatMulInteger");
  MatMulIntegerCall c;
  c.a_signed = decode_flag(call, "MatMulInteger", "a_signed");
  c.b_signed = decode_flag(call, "MatMulInteger", "b_signed");
  return c;
}

}  // namespace ferrite
