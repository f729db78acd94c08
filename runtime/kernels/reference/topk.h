// The TopK extern, defined by its reference implementation here:
//   inputs = {X}, outputs = {Values, Indices}; ints["axis"] in [0, r), ints["k"],
//   ints["largest"] (default 1).
// Along `axis`, every slice of X gives its k largest (largest = 1) or smallest elements,
// best first, with their positions in the slice. Ties go to the lower position (ONNX's
// rule), so the result is fully determined; NaN counts as larger than every number (as in
// torch.topk). Values has X's dtype (any with an element representation; elements are
// copied bit for bit), Indices is int64; both have X's shape with dim `axis` = k, and
// 0 <= k <= X.shape[axis]. The output is always sorted, which also satisfies ONNX's
// sorted = 0 (any order). Bad operands throw ferrite::Error "TopK: ...".
#pragma once

#include "runtime/backend.h"

namespace ferrite {

void reference_topk(const ExternCall& call, const ExternBuffer* inputs,
                    const ExternBuffer* outputs);

}  // namespace ferrite
