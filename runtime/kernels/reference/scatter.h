// The scatter externs, defined by their reference implementations here. Both copy `data`
// to `out`, then apply the updates one at a time in row-major order of `updates`, so the
// result is deterministic: with duplicate indices and no reduction the last update wins.
//
// "ScatterElements" (ONNX ScatterElements, and the deprecated Scatter):
//   inputs = {data, indices, updates}, outputs = {out}; ints["axis"] in [0, r).
//   indices and updates have one shape, of data's rank r, each dim no larger than data's
//   (along `axis` any size). For every position p of updates:
//     q = p with q[axis] = indices[p];   out[q] = updates[p]   (or reduce(out[q], updates[p]))
// "ScatterND" (ONNX ScatterND):
//   inputs = {data, indices, updates}, outputs = {out}. indices has shape [I..., k] with
//   1 <= k <= r, updates has shape [I..., data.shape[k:]...]. For every I:
//     out[indices[I, 0], ..., indices[I, k-1], ...] = updates[I, ...]   (or reduced)
//
// Common to both: ints["reduction"], when present, is a ReduceKind (ops.h): Sum, Prod, Max
// or Min, computed as the kernels' reduce step (in the compute type, NaN propagating, on
// bool: or / and / or / and). data, updates and out share one dtype, any with an element
// representation (a plain scatter copies elements bit for bit); indices are int32 or
// int64, an index i of a dim of size n must lie in [-n, n) and a negative one counts from
// the end. out has data's shape and must not overlap the inputs. Any bad operand or index
// throws ferrite::Error "<op>: ...".
#pragma once

#include "runtime/backend.h"

namespace ferrite {

void reference_scatter_elements(const ExternCall& call, const ExternBuffer* inputs,
                                const ExternBuffer* outputs);
void reference_scatter_nd(const ExternCall& call, const ExternBuffer* inputs,
                          const ExternBuffer* outputs);

}  // namespace ferrite
