// The portable backend's MatMulInteger extern (semantics in
// runtime/kernels/reference/matmul_integer.h). The operands minus their zero points are
// packed as int16 (A by rows, B by columns, K padded to a whole vector; a constant B with
// constant zero points once, at prepare), and each 4x4 block of C is 16 dot products of
// int16 pairs widened into int32 lanes (Highway's ReorderWidenMulAccumulate: pmaddwd on x86,
// i32x4.dot_i16x8_s in wasm, the NEON widening multiply-adds), over column chunks whose
// packed B stays in cache. |a - z| and |b - z| are at most 255, so no product of two
// overflows int16 pairs' int32 sums; the sums over K wrap modulo 2^32 as the reference's do.
// Threads take blocks of rows; the result does not depend on their number.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/backend.h"

namespace ferrite {

// `call` must outlive the result.
std::unique_ptr<PreparedExtern> prepare_portable_matmul_integer(
    const ExternCall& call, const std::vector<ExternBuffer>& constants, int threads);

// K padded for int16_dot_block: a multiple of kInt16Block (vectors are capped at 32 lanes).
constexpr int64_t kInt16Block = 32;

// out[r * 4 + c] = sum_k a[r * stride + k] * b[c * stride + k] for r < rows, c < cols (each
// 1 to 4), k < kp, wrapping modulo 2^32; kp a multiple of kInt16Block, stride too.
void int16_dot_block(const int16_t* a, const int16_t* b, int64_t stride, int64_t kp, int rows,
                     int cols, int32_t* out);

}  // namespace ferrite
