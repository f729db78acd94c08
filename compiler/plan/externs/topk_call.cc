#include "compiler/plan/externs/topk_call.h"

#include <string>

#include "compiler/plan/error.h"
#include "compiler/plan/plan.h"

namespace ferrite {
ExternAttrs encode(const TopKCall& c) {
  ExternAttrs a;
  a.ints["axis"] = c.axis;
  a.ints["k"] = c.k;
  a.ints["largest"] = c.largest ? 1 : 0;
  return a;
}

TopKCall decode_topk_call(const ExternCall& call, const std::vector<int64_t>& x) {
  const char* op = "TopK";
  if (call.op != ExternOp::TopK) fail("extern '", extern_op_name(call.op), "' is not a TopK");
  TopKCall c;
  const int64_t rank = static_cast<int64_t>(x.size());
  c.axis = decode_int(call, "axis", -1);
  if (c.axis < 0 || c.axis >= rank)
    fail(op, ": axis ", c.axis, " out of range for X of rank ", rank);
  c.k = decode_int(call, "k", -1);
  const int64_t n = x[static_cast<size_t>(c.axis)];
  if (c.k < 0 || c.k > n)
    fail(op, ": k = ", c.k, " outside [0, ", n, "] (X ", dims_text(x), ", axis ", c.axis, ")");
  c.largest = decode_int(call, "largest", 1) != 0;
  return c;
}

}  // namespace ferrite
