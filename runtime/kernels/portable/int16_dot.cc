// The int16 dot-product blocks of matmul_int8.h, compiled per target by foreach_target.h.
#include <cstdint>

#include "runtime/kernels/portable/matmul_int8.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "runtime/kernels/portable/int16_dot.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ferrite {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Columns [c0, c0 + kCols) of a 4-row block (rows and columns past the block's point at its
// first row or column: their sums are computed and dropped, so the loop has no branches).
template <int kCols>
void DotColumns(const int16_t* const* ar, const int16_t* const* bc, int64_t kp, int rows, int cols,
                int c0, int32_t* out) {
  const hn::CappedTag<int16_t, kInt16Block> d16;
  const hn::Repartition<int32_t, decltype(d16)> d32;
  using V32 = hn::Vec<decltype(d32)>;
  V32 s0[4 * kCols], s1[4 * kCols];
  for (int i = 0; i < 4 * kCols; ++i) s0[i] = s1[i] = hn::Zero(d32);
  const int64_t step = static_cast<int64_t>(hn::Lanes(d16));
  for (int64_t k = 0; k < kp; k += step) {
    const auto a0 = hn::Load(d16, ar[0] + k), a1 = hn::Load(d16, ar[1] + k);
    const auto a2 = hn::Load(d16, ar[2] + k), a3 = hn::Load(d16, ar[3] + k);
    for (int c = 0; c < kCols; ++c) {
      const auto bv = hn::Load(d16, bc[c0 + c] + k);
      s0[c] = hn::ReorderWidenMulAccumulate(d32, a0, bv, s0[c], s1[c]);
      s0[kCols + c] = hn::ReorderWidenMulAccumulate(d32, a1, bv, s0[kCols + c], s1[kCols + c]);
      s0[2 * kCols + c] =
          hn::ReorderWidenMulAccumulate(d32, a2, bv, s0[2 * kCols + c], s1[2 * kCols + c]);
      s0[3 * kCols + c] =
          hn::ReorderWidenMulAccumulate(d32, a3, bv, s0[3 * kCols + c], s1[3 * kCols + c]);
    }
  }
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < kCols && c0 + c < cols; ++c)
      out[r * 4 + c0 + c] =
          hn::GetLane(hn::SumOfLanes(d32, hn::Add(s0[r * kCols + c], s1[r * kCols + c])));
}

// rows x cols dot products. x86 before AVX-512 has 16 vector registers: 16 accumulators and
// the operands would spill, so it computes the block as two 4x2 halves (8 accumulators, 4
// rows and a column: 13 registers), reading the rows twice from L1. Targets with 32
// registers (AVX-512, NEON, SVE) and wasm take all 4 columns at once.
void DotBlock(const int16_t* a, const int16_t* b, int64_t stride, int64_t kp, int rows, int cols,
              int32_t* out) {
  const int16_t* ar[4];
  const int16_t* bc[4];
  for (int i = 0; i < 4; ++i) {
    ar[i] = a + (i < rows ? i : 0) * stride;
    bc[i] = b + (i < cols ? i : 0) * stride;
  }
#if HWY_ARCH_X86 && HWY_TARGET > HWY_AVX3
  DotColumns<2>(ar, bc, kp, rows, cols, 0, out);
  if (cols > 2) DotColumns<2>(ar, bc, kp, rows, cols, 2, out);
#else
  DotColumns<4>(ar, bc, kp, rows, cols, 0, out);
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace ferrite
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ferrite {

HWY_EXPORT(DotBlock);

void int16_dot_block(const int16_t* a, const int16_t* b, int64_t stride, int64_t kp, int rows,
                     int cols, int32_t* out) {
  HWY_DYNAMIC_DISPATCH(DotBlock)(a, b, stride, kp, rows, cols, out);
}

}  // namespace ferrite
#endif  // HWY_ONCE
