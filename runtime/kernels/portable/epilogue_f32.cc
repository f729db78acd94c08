// epilogue.h: moving an epilogue's origin, and applying it to a finished plane (per target,
// compiled by foreach_target.h around epilogue-inl.h).
#include "runtime/kernels/portable/epilogue.h"

#include <algorithm>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "runtime/kernels/portable/epilogue_f32.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "runtime/kernels/portable/epilogue-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ferrite {
namespace HWY_NAMESPACE {

// Row by row, through an aligned buffer of whole vectors a strip at a time, so that the
// padding lanes EpilogueRow computes on never touch memory outside y.
void ApplyRows(const Epilogue& e, float* y, int64_t y_rs, int64_t rows, int64_t cols) {
  constexpr int64_t kStrip = 256;
  static_assert(kStrip % vm::kMaxLanes == 0, "strips are whole vectors");
  HWY_ALIGN float buf[kStrip];
  using epi::EpilogueRow;
  for (int64_t r = 0; r < rows; ++r) {
    float* row = y + r * y_rs;
    for (int64_t c0 = 0; c0 < cols; c0 += kStrip) {
      const int64_t w = std::min(kStrip, cols - c0);
      std::copy(row + c0, row + c0 + w, buf);
      std::fill(buf + w, buf + kStrip, 0.0f);
      EpilogueRow(e, r, c0, buf, w);
      std::copy(buf, buf + w, row + c0);
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace ferrite
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ferrite {

HWY_EXPORT(ApplyRows);

void Epilogue::shift(int64_t di, int64_t dj) {
  if (row_bias) row_bias += di * row_bias_stride;
  for (EpilogueOperand& t : operands)
    if (t.p) t.p += di * t.rs + dj * t.cs;
}

void epilogue_apply_f32(const Epilogue& e, float* y, int64_t y_rs, int64_t rows, int64_t cols) {
  if (!e.active() || rows <= 0 || cols <= 0) return;
  HWY_DYNAMIC_DISPATCH(ApplyRows)(e, y, y_rs, rows, cols);
}

}  // namespace ferrite
#endif  // HWY_ONCE
