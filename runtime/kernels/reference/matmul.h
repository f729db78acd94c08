// The MatMul extern, defined by its reference implementation here:
//   C[..., M, N] = alpha * A[..., M, K] @ B[..., K, N]
// inputs = {A, B}, outputs = {C}: three TensorRefs of one rank r >= 2 with equal batch dims
// (a broadcast batch operand has stride 0), arbitrary strides (a transposed operand is
// just strides), floats["alpha"] (default 1). Only float32. C must not overlap A or B.
// parse_matmul is shared with the other backends so that they accept exactly the same calls.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/backend.h"

namespace ferrite {

// One operand's layout, in elements: offset plus the strides of the batch, row and column
// dims.
struct MatMulLayout {
  int64_t offset = 0;
  std::vector<int64_t> batch_strides;
  int64_t row_stride = 0, col_stride = 0;
};

// The layout of a matrix operand of rank >= 2 (its last two dims the matrix).
MatMulLayout matmul_layout(const TensorRef& r);

struct MatMulArgs {
  const float* a = nullptr;
  const float* b = nullptr;
  float* c = nullptr;
  int64_t m = 0, k = 0, n = 0;
  float alpha = 1;
  std::vector<int64_t> batch;  // the batch dims (may be empty)
  MatMulLayout la, lb, lc;

  int64_t batch_count() const;
  // Element offsets of batch item `i` (row-major over the batch dims) in A, B and C.
  void batch_offsets(int64_t i, int64_t* oa, int64_t* ob, int64_t* oc) const;
};

// Checks the call (operand count, dtypes, ranks, shapes, bounds against the buffers) and
// throws ferrite::Error "MatMul: ..." on any problem.
MatMulArgs parse_matmul(const ExternCall& call, const ExternBuffer* inputs,
                        const ExternBuffer* outputs);

// Naive triple loop, accumulating in float in k order, then scaled by alpha.
void reference_matmul(const ExternCall& call, const ExternBuffer* inputs,
                      const ExternBuffer* outputs);

}  // namespace ferrite
