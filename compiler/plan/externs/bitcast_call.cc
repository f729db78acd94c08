#include "compiler/plan/externs/bitcast_call.h"

#include "compiler/plan/error.h"
#include "compiler/plan/plan.h"

namespace ferrite {

ExternAttrs encode(const BitCastCall&) {
  return {};
}

BitCastCall decode_bitcast_call(const ExternCall& call) {
  if (call.op != ExternOp::BitCast) fail("extern '", extern_op_name(call.op), "' is not a BitCast");
  if (!call.ints.empty() || !call.floats.empty()) fail("BitCast: takes no attributes");
  return {};
}

}  // namespace ferrite
