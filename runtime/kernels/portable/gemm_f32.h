// The portable backend's float32 GEMM (Highway): C = alpha * A @ B for one matrix, any
// strides. Goto/BLIS structure: B is packed in KC x NC blocks of NR-wide panels (NR = two
// vectors), A in MC x KC blocks of 6-row panels, and a 6 x 2-vector register-tiled
// microkernel accumulates each tile over KC with fused multiply-adds. Packing is where the
// strides are absorbed, so transposed or broadcast operands cost one copy, not a slow loop.
#pragma once

#include <cstdint>

#include "runtime/backend.h"

namespace ferrite {

struct GemmF32 {
  const float* a = nullptr;  // element (0, 0) of A
  int64_t a_rs = 0, a_cs = 0;
  const float* b = nullptr;
  int64_t b_rs = 0, b_cs = 0;
  float* c = nullptr;
  int64_t c_rs = 0, c_cs = 0;
  int64_t m = 0, n = 0, k = 0;  // k > 0; every element the strides reach must exist
  float alpha = 1;
};

void gemm_f32(const GemmF32& g);

// The MatMul extern (semantics in runtime/kernels/reference/matmul.h) on gemm_f32.
void portable_matmul(const ExternCall& call, const ExternBuffer* inputs,
                     const ExternBuffer* outputs);

}  // namespace ferrite
