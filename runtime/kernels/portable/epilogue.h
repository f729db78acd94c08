// The fused epilogue of the portable MatMul and convolutions: what happens to each block of
// the output while it is still in cache, right after its last K block — a bias per row (the
// convolutions' per-channel B), then ExternCall::post_ops in order (compiler/plan/post_ops.h).
// It is stated in the 2-D coordinates (i, j) of one GEMM's output C, so the GEMM, the
// depthwise loop and col2im apply it the same way; the per-target code is epilogue-inl.h.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/plan/plan.h"
#include "runtime/backend.h"

namespace ferrite {

// A post-op operand t as a 2-D view: t(i, j) = p[i * rs + j * cs] (strides may be 0 along
// broadcast dims).
struct EpilogueOperand {
  const float* p = nullptr;
  int64_t rs = 0, cs = 0;
};

struct Epilogue {
  const float* row_bias = nullptr;  // y(i, j) += row_bias[i * row_bias_stride] first
  int64_t row_bias_stride = 0;
  const PostOp* ops = nullptr;
  size_t op_count = 0;
  std::vector<EpilogueOperand> operands;  // one per op; only binary ones are read

  bool active() const { return row_bias != nullptr || op_count != 0; }
  // Makes this the epilogue of the block of C whose element (0, 0) was this one's (di, dj).
  void shift(int64_t di, int64_t dj);
};

// Applies `e` to y(r, c) = y[r * y_rs + c] for r < rows, c < cols: the paths that finish a
// whole plane before the epilogue can run (ConvTranspose's col2im, a bias-only Conv).
void epilogue_apply_f32(const Epilogue& e, float* y, int64_t y_rs, int64_t rows, int64_t cols);

}  // namespace ferrite
