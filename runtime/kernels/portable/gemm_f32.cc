// Highway implementation of gemm_f32.h, compiled per target by foreach_target.h.
#include "runtime/kernels/portable/gemm_f32.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/kernels/reference/matmul.h"
#include "runtime/kernels/reference/post_ops_apply.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "runtime/kernels/portable/gemm_f32.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ferrite {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

constexpr int64_t kMR = 6;     // rows of a register tile
constexpr int64_t kKC = 256;   // depth of a packed block (a B micro-panel stays in L1)
constexpr int64_t kMC = 96;    // rows of a packed A block (stays in L2)
constexpr int64_t kNC = 1024;  // columns of a packed B block
constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(float);

int64_t round_up(int64_t x, int64_t m) {
  return (x + m - 1) / m * m;
}

// B[p0 : p0+kc, j0 : j0+nc] as panels of nr columns: panel q holds kc rows of nr floats,
// zero-padded past nc.
void PackB(const GemmF32& g, int64_t p0, int64_t kc, int64_t j0, int64_t nc, int64_t nr,
           float* bp) {
  for (int64_t jp = 0; jp < nc; jp += nr) {
    const int64_t w = std::min(nr, nc - jp);
    float* panel = bp + (jp / nr) * kc * nr;
    for (int64_t p = 0; p < kc; ++p) {
      const float* src = g.b + (p0 + p) * g.b_rs + (j0 + jp) * g.b_cs;
      float* row = panel + p * nr;
      if (g.b_cs == 1) {
        std::memcpy(row, src, static_cast<size_t>(w) * sizeof(float));
      } else {
        for (int64_t c = 0; c < w; ++c) row[c] = src[c * g.b_cs];
      }
      std::fill(row + w, row + nr, 0.0f);
    }
  }
}

// A[i0 : i0+mc, p0 : p0+kc] as panels of kMR rows, k-major, zero-padded past mc.
void PackA(const GemmF32& g, int64_t i0, int64_t mc, int64_t p0, int64_t kc, float* ap) {
  for (int64_t ip = 0; ip < mc; ip += kMR) {
    const int64_t h = std::min(kMR, mc - ip);
    float* panel = ap + (ip / kMR) * kc * kMR;
    for (int64_t r = 0; r < kMR; ++r) {
      if (r >= h) {
        for (int64_t p = 0; p < kc; ++p) panel[p * kMR + r] = 0.0f;
        continue;
      }
      const float* src = g.a + (i0 + ip + r) * g.a_rs + p0 * g.a_cs;
      for (int64_t p = 0; p < kc; ++p) panel[p * kMR + r] = src[p * g.a_cs];
    }
  }
}

struct Tile {
  float* c;  // element (0, 0) of the tile in C
  int64_t h, w;
  bool accumulate;  // add to C (later K blocks) instead of overwriting it
};

HWY_INLINE void StoreRow(DF d, float* row, VF v0, VF v1, VF alpha, bool acc) {
  const size_t N = hn::Lanes(d);
  if (acc) {
    hn::StoreU(hn::MulAdd(alpha, v0, hn::LoadU(d, row)), d, row);
    hn::StoreU(hn::MulAdd(alpha, v1, hn::LoadU(d, row + N)), d, row + N);
  } else {
    hn::StoreU(hn::Mul(alpha, v0), d, row);
    hn::StoreU(hn::Mul(alpha, v1), d, row + N);
  }
}

// Partial tiles and strided C go through a buffer and scalar writes.
void StoreEdge(const GemmF32& g, const Tile& t, const float* tile, int64_t nr) {
  for (int64_t r = 0; r < t.h; ++r) {
    for (int64_t c = 0; c < t.w; ++c) {
      float& dst = t.c[r * g.c_rs + c * g.c_cs];
      const float v = g.alpha * tile[r * nr + c];
      dst = t.accumulate ? dst + v : v;
    }
  }
}

// The 6 x 2-vector microkernel: twelve accumulators, two B loads and six broadcasts of A
// per step of k.
void Micro(const GemmF32& g, int64_t kc, const float* HWY_RESTRICT ap, const float* HWY_RESTRICT bp,
           const Tile& t) {
  const DF d;
  const size_t N = hn::Lanes(d);
  VF c00 = hn::Zero(d), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  VF c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  for (int64_t p = 0; p < kc; ++p, ap += kMR, bp += 2 * N) {
    const VF b0 = hn::LoadU(d, bp), b1 = hn::LoadU(d, bp + N);
    VF a = hn::Set(d, ap[0]);
    c00 = hn::MulAdd(a, b0, c00);
    c01 = hn::MulAdd(a, b1, c01);
    a = hn::Set(d, ap[1]);
    c10 = hn::MulAdd(a, b0, c10);
    c11 = hn::MulAdd(a, b1, c11);
    a = hn::Set(d, ap[2]);
    c20 = hn::MulAdd(a, b0, c20);
    c21 = hn::MulAdd(a, b1, c21);
    a = hn::Set(d, ap[3]);
    c30 = hn::MulAdd(a, b0, c30);
    c31 = hn::MulAdd(a, b1, c31);
    a = hn::Set(d, ap[4]);
    c40 = hn::MulAdd(a, b0, c40);
    c41 = hn::MulAdd(a, b1, c41);
    a = hn::Set(d, ap[5]);
    c50 = hn::MulAdd(a, b0, c50);
    c51 = hn::MulAdd(a, b1, c51);
  }
  const VF alpha = hn::Set(d, g.alpha);
  const int64_t nr = static_cast<int64_t>(2 * N);
  if (t.h == kMR && t.w == nr && g.c_cs == 1) {
    StoreRow(d, t.c, c00, c01, alpha, t.accumulate);
    StoreRow(d, t.c + g.c_rs, c10, c11, alpha, t.accumulate);
    StoreRow(d, t.c + 2 * g.c_rs, c20, c21, alpha, t.accumulate);
    StoreRow(d, t.c + 3 * g.c_rs, c30, c31, alpha, t.accumulate);
    StoreRow(d, t.c + 4 * g.c_rs, c40, c41, alpha, t.accumulate);
    StoreRow(d, t.c + 5 * g.c_rs, c50, c51, alpha, t.accumulate);
    return;
  }
  HWY_ALIGN float tile[kMR * 2 * kMaxLanes];
  const VF acc[kMR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
  for (int64_t r = 0; r < kMR; ++r) {
    hn::Store(acc[r][0], d, tile + r * nr);
    hn::Store(acc[r][1], d, tile + r * nr + N);
  }
  StoreEdge(g, t, tile, nr);
}

void GemmF32Impl(const GemmF32& g) {
  const DF d;
  const int64_t nr = static_cast<int64_t>(2 * hn::Lanes(d));
  const int64_t kc_max = std::min(kKC, g.k);
  std::vector<float> bp(static_cast<size_t>(kc_max * round_up(std::min(kNC, g.n), nr)));
  std::vector<float> ap(static_cast<size_t>(kc_max * round_up(std::min(kMC, g.m), kMR)));
  for (int64_t j0 = 0; j0 < g.n; j0 += kNC) {
    const int64_t nc = std::min(kNC, g.n - j0);
    for (int64_t p0 = 0; p0 < g.k; p0 += kKC) {
      const int64_t kc = std::min(kKC, g.k - p0);
      PackB(g, p0, kc, j0, nc, nr, bp.data());
      for (int64_t i0 = 0; i0 < g.m; i0 += kMC) {
        const int64_t mc = std::min(kMC, g.m - i0);
        PackA(g, i0, mc, p0, kc, ap.data());
        for (int64_t jp = 0; jp < nc; jp += nr) {
          for (int64_t ip = 0; ip < mc; ip += kMR) {
            const Tile t{g.c + (i0 + ip) * g.c_rs + (j0 + jp) * g.c_cs, std::min(kMR, mc - ip),
                         std::min(nr, nc - jp), p0 > 0};
            Micro(g, kc, ap.data() + (ip / kMR) * kc * kMR, bp.data() + (jp / nr) * kc * nr, t);
          }
        }
      }
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace ferrite
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ferrite {

HWY_EXPORT(GemmF32Impl);

void gemm_f32(const GemmF32& g) {
  if (g.m <= 0 || g.n <= 0 || g.k <= 0) return;
  HWY_DYNAMIC_DISPATCH(GemmF32Impl)(g);
}

void portable_matmul(const ExternCall& call, const ExternBuffer* inputs,
                     const ExternBuffer* outputs) {
  const MatMulArgs m = parse_matmul(call, inputs, outputs);
  if (m.m == 0 || m.n == 0) return;
  const int64_t batches = m.batch_count();
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t oa, ob, oc;
    m.batch_offsets(bi, &oa, &ob, &oc);
    if (m.k == 0) {  // an empty sum: C = 0, and A and B have no elements to point at
      for (int64_t i = 0; i < m.m; ++i)
        for (int64_t j = 0; j < m.n; ++j)
          m.c[oc + i * m.lc.row_stride + j * m.lc.col_stride] = 0.0f;
      continue;
    }
    GemmF32 g;
    g.a = m.a + oa;
    g.a_rs = m.la.row_stride;
    g.a_cs = m.la.col_stride;
    g.b = m.b + ob;
    g.b_rs = m.lb.row_stride;
    g.b_cs = m.lb.col_stride;
    g.c = m.c + oc;
    g.c_rs = m.lc.row_stride;
    g.c_cs = m.lc.col_stride;
    g.m = m.m;
    g.n = m.n;
    g.k = m.k;
    g.alpha = m.alpha;
    gemm_f32(g);
  }
  apply_post_ops(call, inputs, outputs);
}

}  // namespace ferrite
#endif  // HWY_ONCE
