// The "SegmentReduce" extern (GNN message passing, made by the fuse_message_passing pass),
// defined by its reference implementation here:
//
//   inputs  = {x [N, F], src [E], dst [E], weight [E] if ints["weighted"], data [R, F] if
//              present}, outputs = {out [R, F]};  ints["rows"] = R, ints["reduction"] a
//              ReduceKind: Sum, Max or Min.
//   out[r, :] = data[r, :] (zeros without data); then for e = 0, 1, ..., E - 1 in order,
//   where dst[e] == r:  out[r, :] = reduce(out[r, :], x[src[e], :] * weight[e]);
//   then ExternCall::post_ops (float32 only; their operands come after the inputs above).
//
// which is ScatterElements(data, dst expanded to [E, F], Gather(x, src) * weight, axis 0)
// exactly: the product is rounded to the element type before it is reduced, and each row
// reduces its edges in edge order (so the result is one value whatever computes it).
// x, weight, data and out share a dtype: any with an element representation, but not
// uint64 for max / min (the arithmetic is scalar_ops'). src and dst are int32 or int64;
// an index i of a dim of size n must lie in [-n, n) (negative counts from the end; src
// indexes N, dst R). out must not overlap the inputs. A bad operand or index throws
// ferrite::Error "SegmentReduce: ...".
#pragma once

#include <cstdint>

#include "compiler/plan/ops.h"
#include "runtime/backend.h"

namespace ferrite {

// The checked operands, for the implementations that share the contract.
struct SegmentOperands {
  const TensorRef *x = nullptr, *src = nullptr, *dst = nullptr, *weight = nullptr, *data = nullptr,
                  *out = nullptr;
  ExternBuffer x_buf, src_buf, dst_buf, weight_buf, data_buf, out_buf;
  int64_t rows = 0, features = 0, edges = 0, nodes = 0;
  ReduceKind kind = ReduceKind::Sum;
};

SegmentOperands parse_segment_reduce(const ExternCall& call, const ExternBuffer* inputs,
                                     const ExternBuffer* outputs);

// Index e of `ref` (src or dst), checked against [-n, n) and made non-negative.
int64_t segment_index(const TensorRef& ref, const ExternBuffer& buf, int64_t e, int64_t n,
                      const char* what);

void reference_segment_reduce(const ExternCall& call, const ExternBuffer* inputs,
                              const ExternBuffer* outputs);

}  // namespace ferrite
