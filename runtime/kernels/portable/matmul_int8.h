// The portable backend's MatMulInteger extern (semantics in
// runtime/kernels/reference/matmul_integer.h). The operands minus their zero points are
// packed as int16: A by rows (K padded to a whole vector), B as a 1x1 convolution's weights
// (conv_int8_direct.h: blocks of 16 columns with pairs of rows interleaved; a constant B with
// constant zero points once, at the first run), and C's rows are that convolution's output
// points: each pair of A's values broadcast against a vector of B's columns, one widening
// multiply-add (pmaddwd, i32x4.dot_i16x8_s, the NEON widening multiply-adds) per pair, in
// int32 lanes. |a - z| and |b - z| are at most 255, so no product of two overflows int16
// pairs' int32 sums; the sums over K wrap modulo 2^32 as the reference's do. Threads take
// blocks of rows; the result does not depend on their number.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "compiler/plan/aligned_bytes.h"
#include "runtime/backend.h"

namespace ferrite {

// `call` must outlive the result.
std::unique_ptr<PreparedExtern> prepare_portable_matmul_integer(
    const ExternCall& call, const std::vector<ExternBuffer>& constants, int threads);

// K padded for int16_dot_block: a multiple of kInt16Block (vectors are capped at 32 lanes).
constexpr int64_t kInt16Block = 32;

inline int64_t int16_padded(int64_t k) {
  return (k + kInt16Block - 1) / kInt16Block * kInt16Block;
}

// Int16 copies of operands minus zero points, one line of `kp` (a multiple of kInt16Block)
// per row (of A, of a convolution's weights) or column (of B, of its input's windows).
class Int16Panel {
 public:
  void resize(int64_t lines, int64_t kp) {
    const auto n = static_cast<size_t>(lines * kp);
    if (n > size_) {
      bytes_ = aligned_alloc_bytes(n * sizeof(int16_t));
      size_ = n;
    }
    kp_ = kp;
  }
  int16_t* line(int64_t i) { return reinterpret_cast<int16_t*>(bytes_.get()) + i * kp_; }
  const int16_t* line(int64_t i) const {
    return reinterpret_cast<const int16_t*>(bytes_.get()) + i * kp_;
  }

 private:
  AlignedBytes bytes_;
  size_t size_ = 0;
  int64_t kp_ = 0;
};

// out[r * 4 + c] = sum_k a[r * stride + k] * b[c * stride + k] for r < rows, c < cols (each
// 1 to 4), k < kp, wrapping modulo 2^32; kp a multiple of kInt16Block, stride too.
void int16_dot_block(const int16_t* a, const int16_t* b, int64_t stride, int64_t kp, int rows,
                     int cols, int32_t* out);

}  // namespace ferrite
