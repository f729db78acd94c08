#include "compiler/plan/externs/scatter_call.h"

#include <string>

#include "compiler/plan/error.h"
#include "compiler/plan/plan.h"

namespace ferrite {

ExternAttrs encode(const ScatterCall& c) {
  ExternAttrs a;
  if (!c.nd) a.ints["axis"] = c.axis;
  if (c.reduction) a.ints["reduction"] = static_cast<int64_t>(*c.reduction);
  return a;
}

ScatterCall decode_scatter_call(const ExternCall& call, size_t data_rank) {
  const ExternOp x = call.op;
  if (x != ExternOp::ScatterElements && x != ExternOp::ScatterND)
    fail("extern '", extern_op_name(call.op), "' is not a scatter");
  const char* op = extern_op_name(x);
  ScatterCall c;
  c.nd = x == ExternOp::ScatterND;
  auto red = call.ints.find("reduction");
  if (red != call.ints.end()) {
    // Compared as int64: the enum's narrower type would wrap 2^62 to Sum.
    const int64_t k = red->second;
    if (k != static_cast<int64_t>(ReduceKind::Sum) && k != static_cast<int64_t>(ReduceKind::Prod) &&
        k != static_cast<int64_t>(ReduceKind::Max) && k != static_cast<int64_t>(ReduceKind::Min))
      fail(op, ": invalid reduction ", k);
    c.reduction = static_cast<ReduceKind>(k);
  }
  if (c.nd) return c;
  const int64_t rank = static_cast<int64_t>(data_rank);
  auto ax = call.ints.find("axis");
  if (ax == call.ints.end() || ax->second < 0 || ax->second >= rank)
    fail(op, ": axis ", ax == call.ints.end() ? std::string("missing") : str_cat(ax->second),
         " out of range for data of rank ", rank);
  c.axis = ax->second;
  return c;
}

}  // namespace ferrite
