// The MatMulInteger extern, defined by its reference implementation here:
//   C[..., M, N] = sum_k (A[..., M, K] - a_zero_point) * (B[..., K, N] - b_zero_point[N])
// inputs = {A, B, AZ, BZ}, outputs = {C}. A and B: uint8 or int8 views of one rank r >= 2
// with equal batch dims (a broadcast batch operand has stride 0), arbitrary strides. AZ: one
// value of A's type (shape [1]); BZ: N values of B's type (shape [N]; stride 0 for one value
// shared by every column). C: int32, rank r. ints "a_signed" and "b_signed" say A's and B's
// types. The sums are exact and stored modulo 2^32, as
// onnxruntime's int32 accumulators wrap. C must not overlap the inputs. No post-ops.
// parse_matmul_integer is shared with the other backends so that they accept exactly the
// same calls.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/backend.h"
#include "runtime/kernels/reference/matmul.h"

namespace ferrite {

struct MatMulIntegerArgs {
  MatMulArgs shape;  // m, k, n, batch and the three layouts (its float pointers unused)
  const void* a = nullptr;
  const void* b = nullptr;
  int32_t* c = nullptr;
  bool a_signed = false, b_signed = false;
  int32_t a_zero_point = 0;
  std::vector<int32_t> b_zero_points;  // N

  // A's and B's element at an element offset, as an int.
  int32_t a_at(int64_t i) const {
    return a_signed ? static_cast<const int8_t*>(a)[i] : static_cast<const uint8_t*>(a)[i];
  }
  int32_t b_at(int64_t i) const {
    return b_signed ? static_cast<const int8_t*>(b)[i] : static_cast<const uint8_t*>(b)[i];
  }
};

// Checks the call (operand count, dtypes, ranks, shapes, bounds against the buffers) and
// throws ferrite::Error "MatMulInteger: ..." on any problem.
MatMulIntegerArgs parse_matmul_integer(const ExternCall& call, const ExternBuffer* inputs,
                                       const ExternBuffer* outputs);

// Naive triple loop in int64, stored as int32.
void reference_matmul_integer(const ExternCall& call, const ExternBuffer* inputs,
                              const ExternBuffer* outputs);

}  // namespace ferrite
