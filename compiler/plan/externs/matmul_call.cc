#include "compiler/plan/externs/matmul_call.h"

#include "compiler/plan/error.h"
#include "compiler/plan/plan.h"

namespace ferrite {

ExternAttrs encode(const MatMulCall& c) {
  ExternAttrs a;
  a.floats["alpha"] = c.alpha;
  return a;
}

MatMulCall decode_matmul_call(const ExternCall& call) {
  if (call.op != ExternOp::MatMul) fail("extern '", extern_op_name(call.op), "' is not a MatMul");
  MatMulCall c;
  auto alpha = call.floats.find("alpha");
  if (alpha != call.floats.end()) c.alpha = alpha->second;
  return c;
}

}  // namespace ferrite
