// The attributes of the SegmentReduce extern (what it means:
// runtime/kernels/reference/segment_reduce.h), made by the fuse_message_passing pass.
#pragma once

#include <cstdint>

#include "compiler/plan/externs/extern_op.h"
#include "compiler/plan/ops.h"

namespace ferrite {

struct SegmentReduceCall {
  ReduceKind reduction = ReduceKind::Sum;  // Sum, Max or Min
  int64_t rows = 0;                        // R, the output's rows
  bool weighted = false;                   // inputs include a weight per edge

  ExternOp op() const { return ExternOp::SegmentReduce; }
};

// ints "reduction" (a ReduceKind), "rows" and "weighted" (0 or 1).
ExternAttrs encode(const SegmentReduceCall& c);

// Throws ferrite::Error "SegmentReduce: missing ints["<key>"]" for an absent key and
// "SegmentReduce: invalid reduction <k>" unless it is Sum, Max or Min. The op must be
// SegmentReduce.
SegmentReduceCall decode_segment_reduce_call(const ExternCall& call);

}  // namespace ferrite
