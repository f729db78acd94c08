// Recognizes GNN message passing (seed 002) and makes it one node: rows of x gathered by
// a source index, optionally scaled per edge, and scatter-reduced into rows of a tensor by
// a destination index,
//
//   m   = Gather(x, src, axis=0)                                        [E, F]
//         or GatherElements(x, Expand(Unsqueeze(src, [1]), gshape), axis=0)
//   m   = Mul(m, w)  or  Mul(w, m)                     w: [E, 1], optional
//   out = ScatterElements(data, Expand(Unsqueeze(dst, [1]), sshape), m, axis=0)
//         (torch's scatter_add_: its expanded index)
//         or ScatterND(data, Unsqueeze(dst, [1]), m)   (torch's index_put_ accumulate)
//         with reduction add, max or min
//
// (an axes [-1] Unsqueeze too) becomes
//   out = ferrite.SegmentReduce(x, src, dst, w|none, data, sshape|none, gshape|none)
// with the attribute reduction, which the lowering turns into the "SegmentReduce" extern
// (runtime/kernels/reference/segment_reduce.h): a CSR segment reduction by destination
// row, without atomics, whose result does not depend on the thread count. A mean is this
// sum then a Div by the in-degree, which fuse_extern_epilogues folds in as a post-op.
//
// Types and shapes are not known here. The node keeps the matched nodes as a subgraph
// (the Graph attribute ferrite_unfused, whose inputs are the node's non-null ones): where
// the lowering finds operands the extern does not take (a rank other than 2, per-element
// weights, an expanded index that is not [E, F]), it lowers that subgraph instead, so the
// values are the unfused graph's either way.
#pragma once

#include "compiler/graph/ferrite_ops.h"
#include "compiler/graph/graph.h"

namespace ferrite {

void fuse_message_passing(Graph& g);

}  // namespace ferrite
