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

// rows x cols dot products; rows and cols past the block's read row/column 0 again (their
// sums are dropped), so the loop has no branches.
void DotBlock(const int16_t* a, const int16_t* b, int64_t stride, int64_t kp, int rows, int cols,
              int32_t* out) {
  const hn::CappedTag<int16_t, kInt16Block> d16;
  const hn::Repartition<int32_t, decltype(d16)> d32;
  using V32 = hn::Vec<decltype(d32)>;
  const int16_t* ar[4];
  const int16_t* bc[4];
  for (int i = 0; i < 4; ++i) {
    ar[i] = a + (i < rows ? i : 0) * stride;
    bc[i] = b + (i < cols ? i : 0) * stride;
  }
  V32 s0[16], s1[16];
  for (int i = 0; i < 16; ++i) s0[i] = s1[i] = hn::Zero(d32);
  const int64_t step = static_cast<int64_t>(hn::Lanes(d16));
  for (int64_t k = 0; k < kp; k += step) {
    const auto a0 = hn::Load(d16, ar[0] + k), a1 = hn::Load(d16, ar[1] + k);
    const auto a2 = hn::Load(d16, ar[2] + k), a3 = hn::Load(d16, ar[3] + k);
    for (int c = 0; c < 4; ++c) {
      const auto bv = hn::Load(d16, bc[c] + k);
      s0[c] = hn::ReorderWidenMulAccumulate(d32, a0, bv, s0[c], s1[c]);
      s0[4 + c] = hn::ReorderWidenMulAccumulate(d32, a1, bv, s0[4 + c], s1[4 + c]);
      s0[8 + c] = hn::ReorderWidenMulAccumulate(d32, a2, bv, s0[8 + c], s1[8 + c]);
      s0[12 + c] = hn::ReorderWidenMulAccumulate(d32, a3, bv, s0[12 + c], s1[12 + c]);
    }
  }
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      out[r * 4 + c] = hn::GetLane(hn::SumOfLanes(d32, hn::Add(s0[r * 4 + c], s1[r * 4 + c])));
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
