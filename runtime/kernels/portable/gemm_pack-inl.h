// Per-target packing of the portable GEMM (gemm_f32.h): blocks of B as panels of nr columns
// and blocks of A as panels of mr rows, the layouts the microkernel (gemm_micro-inl.h) walks
// with unit steps. The loops follow whichever stride of the source is 1, so a transposed
// operand is read contiguously too. Included once per target by gemm_f32.cc.

#if defined(FERRITE_PORTABLE_GEMM_PACK_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef FERRITE_PORTABLE_GEMM_PACK_INL_H_
#undef FERRITE_PORTABLE_GEMM_PACK_INL_H_
#else
#define FERRITE_PORTABLE_GEMM_PACK_INL_H_
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "hwy/highway.h"
#include "runtime/kernels/portable/keep_loop.h"

HWY_BEFORE_NAMESPACE();
namespace ferrite {
namespace HWY_NAMESPACE {
namespace gemm {
namespace hn = hwy::HWY_NAMESPACE;

// dst[0:n] = src[0:n], n a multiple of the vector length: rows of whole panels (a memcpy
// call, or the `rep movs` GCC inlines for it, costs more than these few vectors).
HWY_INLINE void CopyVectors(const float* HWY_RESTRICT src, float* HWY_RESTRICT dst, int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t i = 0; i < n; i += N) {
    hn::StoreU(hn::LoadU(d, src + i), d, dst + i);
    FERRITE_KEEP_LOOP();
  }
}

// The kc x nc block of B at `b` (rows rs apart, columns cs apart) as panels of nr columns:
// panel q at dst + q * kc * nr holds kc rows of nr floats, zero-padded past nc.
inline void PackB(const float* b, int64_t rs, int64_t cs, int64_t kc, int64_t nc, int64_t nr,
                  float* dst) {
  for (int64_t jp = 0; jp < nc; jp += nr) {
    const int64_t w = std::min(nr, nc - jp);
    float* panel = dst + (jp / nr) * kc * nr;
    const float* src = b + jp * cs;
    if (cs == 1 && w == nr) {
      for (int64_t p = 0; p < kc; ++p) CopyVectors(src + p * rs, panel + p * nr, nr);
      continue;
    }
    if (cs == 1) {
      for (int64_t p = 0; p < kc; ++p) {
        std::memcpy(panel + p * nr, src + p * rs, static_cast<size_t>(w) * sizeof(float));
        std::fill(panel + p * nr + w, panel + (p + 1) * nr, 0.0f);
      }
      continue;
    }
    // Column by column: contiguous reads when B is stored transposed (rs == 1).
    if (w < nr) std::fill(panel, panel + kc * nr, 0.0f);
    for (int64_t c = 0; c < w; ++c)
      for (int64_t p = 0; p < kc; ++p) panel[p * nr + c] = src[c * cs + p * rs];
  }
}

// The mc x kc block of A at `a` as panels of mr rows: panel q at dst + q * kc * mr holds, for
// each k, mr floats (one per row), zero-padded past mc when `zero_pad` says so. The
// microkernels read only a tile's real rows, so a block packed for one run leaves the
// padding as it is (for a GEMV the zeros were 5 floats written per float of A: 5% of the
// mlp's run); a packed weight is padded, so that its bytes are always the same.
inline void PackA(const float* a, int64_t rs, int64_t cs, int64_t mc, int64_t kc, int64_t mr,
                  float* dst, bool zero_pad) {
  for (int64_t ip = 0; ip < mc; ip += mr) {
    const int64_t h = std::min(mr, mc - ip);
    float* panel = dst + (ip / mr) * kc * mr;
    const float* src = a + ip * rs;
    if (rs == 1) {  // A stored transposed: each k step is h contiguous floats
      for (int64_t p = 0; p < kc; ++p) {
        std::memcpy(panel + p * mr, src + p * cs, static_cast<size_t>(h) * sizeof(float));
        if (zero_pad) std::fill(panel + p * mr + h, panel + (p + 1) * mr, 0.0f);
      }
      continue;
    }
    if (zero_pad && h < mr) std::fill(panel, panel + kc * mr, 0.0f);  // one call, not one per k
    for (int64_t r = 0; r < h; ++r)
      for (int64_t p = 0; p < kc; ++p) panel[p * mr + r] = src[r * rs + p * cs];
  }
}

}  // namespace gemm
}  // namespace HWY_NAMESPACE
}  // namespace ferrite
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
