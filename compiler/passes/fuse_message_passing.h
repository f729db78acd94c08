// Recognizes GNN message passing (seed 002) and makes it one node: rows of x gathered by
// a source index, optionally scaled per edge, and scatter-reduced into rows of a tensor by
// a destination index,
//
//   m   = Gather(x, src, axis=0)                       [E, F]
//   m   = Mul(m, w)  or  Mul(w, m)                     w: [E, 1], optional
//   idx = Expand(Unsqueeze(dst, axes=[1]), shape)      [E, F] (torch's expanded index)
//   out = ScatterElements(data, idx, m, axis=0, reduction=add|max|min)
//
// becomes  out = ferrite.SegmentReduce(x, src, dst, w|none, data, shape)  with the
// attribute reduction, which the lowering turns into the "SegmentReduce" extern
// (runtime/kernels/reference/segment_reduce.h): a CSR segment reduction by destination
// row, without atomics, whose result does not depend on the thread count.
//
// Types and shapes are not known here. The node keeps the matched nodes as a subgraph
// (the Graph attribute ferrite_unfused, inputs x, src, dst, w, data, shape): where the
// lowering finds operands the extern does not take (a rank other than 2, per-element
// weights, an index shape that is not [E, F]), it lowers that subgraph instead, so the
// values are the unfused graph's either way.
#pragma once

#include "compiler/graph/ferrite_ops.h"
#include "compiler/graph/graph.h"

namespace ferrite {

void fuse_message_passing(Graph& g);

}  // namespace ferrite
