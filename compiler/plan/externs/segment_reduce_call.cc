#include "compiler/plan/externs/segment_reduce_call.h"

#include "compiler/plan/error.h"
#include "compiler/plan/plan.h"

namespace ferrite {

ExternAttrs encode(const SegmentReduceCall& c) {
  ExternAttrs a;
  a.ints["reduction"] = static_cast<int64_t>(c.reduction);
  a.ints["rows"] = c.rows;
  a.ints["weighted"] = c.weighted ? 1 : 0;
  return a;
}

SegmentReduceCall decode_segment_reduce_call(const ExternCall& call) {
  const char* op = "SegmentReduce";
  if (call.op != ExternOp::SegmentReduce)
    fail("extern '", extern_op_name(call.op), "' is not a SegmentReduce");
  auto get = [&](const char* key) {
    auto it = call.ints.find(key);
    if (it == call.ints.end()) fail(op, ": missing ints[\"", key, "\"]");
    return it->second;
  };
  SegmentReduceCall c;
  c.weighted = get("weighted") != 0;
  c.rows = get("rows");
  const int64_t k = get("reduction");
  if (k != static_cast<int64_t>(ReduceKind::Sum) && k != static_cast<int64_t>(ReduceKind::Max) &&
      k != static_cast<int64_t>(ReduceKind::Min))
    fail(op, ": invalid reduction ", k);
  c.reduction = static_cast<ReduceKind>(k);
  return c;
}

}  // namespace ferrite
