// The portable backend's MatMulNBits extern (semantics in
// runtime/kernels/reference/matmul_nbits.h): the weights stay 2-, 4- or 8-bit codes, decoded
// as they are multiplied, never into a float copy of W.
//   - Up to kNBitsDirectRows rows of A per batch item (a decoder's GEMV): A's rows are copied
//     once per run with K permuted inside each block, so that the codes of one phase of a
//     byte (its low nibble, its high nibble, ...) meet consecutive floats of A. Each step
//     then loads a vector's worth of code bytes, widens them to 32-bit lanes, and per phase
//     shifts, masks and converts them to float and multiplies them into up to 4 rows'
//     partial sums, scaled once per block; the zero points' shares come from A's sum per
//     block (nbits_dot.cc, Highway). A 4-bit weight costs half a byte of memory traffic;
//     threads take chunks of columns. That sum is the reference's up to rounding for finite
//     values; where A, a scale or a zero point is infinite or NaN (which the zero point's
//     share would turn into other non-finite values), the rows go through the GEMM below,
//     which decodes every weight as the reference does.
//   - More rows (a long prompt, a batch): the float GEMM (gemm_f32.h) with a B packer that
//     decodes each KC x NC block of W into its panels as the GEMM needs it, so each weight is
//     decoded once per run (scalar, ~1 ns a weight here) and multiplied by every row.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/backend.h"

namespace ferrite {

struct MatMulNBitsArgs;

// The most rows per batch item the direct kernel takes (more go through the GEMM). Measured
// on mlp_4bit (three 1024 x 2816 layers, one Zen 4 core, AVX-512): 64 rows took 12.4 ms
// direct against 15.6 through the GEMM, 128 rows 26.0 against 20.7.
constexpr int64_t kNBitsDirectRows = 96;

// One direct-kernel task: `rows` (1 to 4) rows of A, permuted (a_rows, a_stride floats
// apart, blocks * block floats each, zero past K) with their sums per block (a_sums, blocks
// floats per row), times W's columns [n0, n1), into C at `c` (row 0, column 0 of this batch
// item) with C's strides. zs: each block's scale times its zero point, [N, blocks].
struct NBitsRowsTask {
  const MatMulNBitsArgs* g = nullptr;
  const float* zs = nullptr;
  const float* a_rows = nullptr;
  int64_t a_stride = 0;
  const float* a_sums = nullptr;
  int rows = 0;
  float* c = nullptr;
  int64_t c_rs = 0, c_cs = 0;
};
void nbits_dot_columns(const NBitsRowsTask& t, int64_t n0, int64_t n1);

// `call` must outlive the result.
std::unique_ptr<PreparedExtern> prepare_portable_matmul_nbits(
    const ExternCall& call, const std::vector<ExternBuffer>& constants, int threads);

}  // namespace ferrite
