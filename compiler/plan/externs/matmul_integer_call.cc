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
  auto flag = [&](const char* key) {
    auto it = call.ints.find(key);
    if (it == call.ints.end()) return false;
    if (it->second != 0 && it->second != 1)
      fail("MatMulInteger: ", key, " must be 0 or 1, got ", it->second);
    return it->second == 1;
  };
  MatMulIntegerCall c;
  c.a_signed = flag("a_signed");
  c.b_signed = flag("b_signed");
  return c;
}

}  // namespace ferrite
