// Per-target microkernels of the portable GEMM (gemm_f32.h): an H x NV-vector register tile
// accumulated over one K block, then finished — alpha, the sum of the earlier K blocks kept
// in C, the epilogue on the last block — and stored. H is the tile's real height (1 to kMR)
// and NV its real width in vectors (1 to kNV), so GEMV-like products, the last rows and the
// last columns of a matrix do no work on padding; a block of A with a single row runs
// several B panels at once (MicroRow).
// Included once per target by gemm_f32.cc.

#if defined(FERRITE_PORTABLE_GEMM_MICRO_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef FERRITE_PORTABLE_GEMM_MICRO_INL_H_
#undef FERRITE_PORTABLE_GEMM_MICRO_INL_H_
#else
#define FERRITE_PORTABLE_GEMM_MICRO_INL_H_
#endif

#include <array>
#include <cstdint>
#include <utility>

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "runtime/kernels/portable/epilogue-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ferrite {
namespace HWY_NAMESPACE {
namespace gemm {
namespace hn = hwy::HWY_NAMESPACE;

using vm::DF;
using vm::kMaxLanes;
using vm::VF;

// The register tile: kMR rows of kNV vectors, chosen by measurement (tests/perf
// portable-ops, Zen 4). With 32 vector registers (AVX-512; NEON and SVE by the same count,
// not measured) 6 x 4 accumulators plus 4 loads of B and a broadcast of A: on AVX-512 it
// beat 8 x 3, 12 x 2, 4 x 4 and 6 x 2. With 16 (AVX2, SSE4, WASM SIMD128, where V8 keeps one
// for itself) 5 x 2, which leaves room for the product of a multiply-add without FMA: on
// AVX2 it beat 6 x 2 by 10-20% and 4 x 3 on most shapes; on SSE4 it tied with 6 x 2.
#if HWY_TARGET <= HWY_AVX3 || HWY_ARCH_ARM_A64
constexpr int kMR = 6;
constexpr int kNV = 4;
#else
constexpr int kMR = 5;
constexpr int kNV = 2;
#endif

// Where a tile goes and what finishing it involves.
struct TileC {
  float* c;  // element (0, 0) of the tile in C
  int64_t c_rs, c_cs;
  int64_t w;  // columns inside C (the rest of the nr are padding)
  float alpha;
  bool accumulate;           // C holds the sum of earlier K blocks
  const Epilogue* epilogue;  // the last K block of an active epilogue, else null
  bool in_registers;         // epi::EpilogueInRegisters(*epilogue)
  int64_t i, j;              // the tile's position in C (the epilogue's coordinates)
};

// Rows [0, h) of a finished tile held in tile[r * nr + c]: scaled, added to C's earlier
// blocks, through the epilogue, stored. The arithmetic is the fast path's (StoreFull), so
// an element's value does not depend on which path its tile took.
template <int NV>
HWY_NOINLINE void FinishTile(float* HWY_RESTRICT tile, int h, const TileC& t) {
  const DF d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d)), nr = NV * N;
  const VF alpha = hn::Set(d, t.alpha);
  const bool contiguous = t.c_cs == 1 && t.w == nr;
  for (int r = 0; r < h; ++r) {
    float* row = tile + r * nr;
    float* c = t.c + r * t.c_rs;
    if (t.accumulate) {
      HWY_ALIGN float old[NV * kMaxLanes];
      if (contiguous) {
        for (int64_t x = 0; x < nr; x += N) hn::Store(hn::LoadU(d, c + x), d, old + x);
      } else {
        for (int64_t x = 0; x < nr; ++x) old[x] = x < t.w ? c[x * t.c_cs] : 0.0f;
      }
      for (int64_t x = 0; x < nr; x += N)
        hn::Store(hn::MulAdd(alpha, hn::Load(d, row + x), hn::Load(d, old + x)), d, row + x);
    } else {
      for (int64_t x = 0; x < nr; x += N)
        hn::Store(hn::Mul(alpha, hn::Load(d, row + x)), d, row + x);
    }
    if (t.epilogue) epi::EpilogueRow(*t.epilogue, t.i + r, t.j, row, t.w);
    if (contiguous) {
      for (int64_t x = 0; x < nr; x += N) hn::StoreU(hn::Load(d, row + x), d, c + x);
    } else {
      for (int64_t x = 0; x < t.w; ++x) c[x * t.c_cs] = row[x];
    }
  }
}

// C rows of a whole-width, unit-stride tile without an epilogue, straight from registers.
template <int H, int NV>
HWY_INLINE void StoreFull(DF d, const VF (&acc)[H][NV], const TileC& t) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const VF alpha = hn::Set(d, t.alpha);
  for (int r = 0; r < H; ++r) {
    float* c = t.c + r * t.c_rs;
    for (int v = 0; v < NV; ++v) {
      const VF y = t.accumulate ? hn::MulAdd(alpha, acc[r][v], hn::LoadU(d, c + v * N))
                                : hn::Mul(alpha, acc[r][v]);
      hn::StoreU(y, d, c + v * N);
    }
  }
}

// A whole-width, unit-stride tile through an epilogue that has vector formulas for all its
// ops (epi::EpilogueInRegisters), finished in registers with FinishTile's arithmetic.
template <int H, int NV>
HWY_INLINE void StoreWithEpilogue(DF d, VF (&acc)[H][NV], const TileC& t) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const VF alpha = hn::Set(d, t.alpha);
  for (int r = 0; r < H; ++r) {
    const float* c = t.c + r * t.c_rs;
    for (int v = 0; v < NV; ++v)
      acc[r][v] = t.accumulate ? hn::MulAdd(alpha, acc[r][v], hn::LoadU(d, c + v * N))
                               : hn::Mul(alpha, acc[r][v]);
  }
  epi::EpilogueTile<H, NV>(*t.epilogue, t.i, t.j, acc);
  for (int r = 0; r < H; ++r)
    for (int v = 0; v < NV; ++v) hn::StoreU(acc[r][v], d, t.c + r * t.c_rs + v * N);
}

// Starts loading what finishing the tile will touch — C's rows and the rows of unit-stride
// post-op operands (a residual), which usually come from memory — so that they arrive
// while the K loop runs instead of stalling the epilogue.
inline void PrefetchFinish(const TileC& t, int h) {
  constexpr int64_t kLine = 64 / sizeof(float);
  const Epilogue& e = *t.epilogue;
  for (int r = 0; r < h; ++r) {
    if (t.c_cs == 1)
      for (int64_t x = 0; x < t.w; x += kLine) hwy::Prefetch(t.c + r * t.c_rs + x);
    for (size_t k = 0; k < e.op_count; ++k) {
      const EpilogueOperand& o = e.operands[k];
      if (!post_op_is_binary(e.ops[k].kind) || o.cs != 1) continue;
      const float* row = o.p + (t.i + r) * o.rs + t.j;
      for (int64_t x = 0; x < t.w; x += kLine) hwy::Prefetch(row + x);
    }
  }
}

// A tile held in registers, finished: straight from them when it is whole-width and
// unit-stride, with no epilogue or one with vector formulas; else through FinishTile.
template <int H, int NV>
HWY_INLINE void FinishRegisters(DF d, VF (&acc)[H][NV], const TileC& t) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  if (t.c_cs == 1 && t.w == NV * N) {
    if (!t.epilogue) return StoreFull<H, NV>(d, acc, t);
    if (t.in_registers) return StoreWithEpilogue<H, NV>(d, acc, t);
  }
  HWY_ALIGN float tile[H * NV * kMaxLanes];
  for (int r = 0; r < H; ++r)
    for (int v = 0; v < NV; ++v) hn::Store(acc[r][v], d, tile + (r * NV + v) * N);
  FinishTile<NV>(tile, H, t);
}

// C tile (H rows) = A panel (kc x kMR, k-major) x B panel (kc rows of NV vectors, b_ks
// floats apart: kNV * N when packed, B's row stride when read in place), then finished.
template <int H, int NV>
HWY_NOINLINE void Micro(int64_t kc, const float* HWY_RESTRICT ap, const float* HWY_RESTRICT bp,
                        int64_t b_ks, const TileC& t) {
  const DF d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  if (t.epilogue) PrefetchFinish(t, H);
  VF acc[H][NV];
  for (int r = 0; r < H; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = hn::Zero(d);
  for (int64_t p = 0; p < kc; ++p, ap += kMR, bp += b_ks) {
    VF b[NV];
    for (int v = 0; v < NV; ++v) b[v] = hn::LoadU(d, bp + v * N);
    for (int r = 0; r < H; ++r) {
      const VF a = hn::Set(d, ap[r]);
      for (int v = 0; v < NV; ++v) acc[r][v] = hn::MulAdd(a, b[v], acc[r][v]);
    }
  }
  FinishRegisters<H, NV>(d, acc, t);
}

// One row of C over kRowPanels whole B panels at once (b[q], each b_ks floats apart along
// k): the tiles of a block of A with a single row (a GEMV), whose one row of accumulators
// per panel would leave each multiply-add waiting on the previous one. Every element sums
// over k in Micro's order with Micro's operations, so the results are the same.
constexpr int kRowPanels = 4;

template <int NV>
HWY_NOINLINE void MicroRow(int64_t kc, const float* HWY_RESTRICT ap,
                           const float* const (&b)[kRowPanels], int64_t b_ks,
                           const TileC (&t)[kRowPanels]) {
  const DF d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  if (t[0].epilogue)
    for (const TileC& tq : t) PrefetchFinish(tq, 1);
  VF acc[kRowPanels][1][NV];
  for (int q = 0; q < kRowPanels; ++q)
    for (int v = 0; v < NV; ++v) acc[q][0][v] = hn::Zero(d);
  for (int64_t p = 0; p < kc; ++p, ap += kMR) {
    const VF a = hn::Set(d, ap[0]);
    for (int q = 0; q < kRowPanels; ++q)
      for (int v = 0; v < NV; ++v)
        acc[q][0][v] = hn::MulAdd(a, hn::LoadU(d, b[q] + p * b_ks + v * N), acc[q][0][v]);
  }
  for (int q = 0; q < kRowPanels; ++q) FinishRegisters<1, NV>(d, acc[q], t[q]);
}

using MicroFn = void (*)(int64_t, const float*, const float*, int64_t, const TileC&);

// Entry i: Micro<i / kNV + 1, i % kNV + 1>.
template <size_t... I>
constexpr std::array<MicroFn, sizeof...(I)> MicroTable(std::index_sequence<I...>) {
  return {{&Micro<static_cast<int>(I / kNV) + 1, static_cast<int>(I % kNV) + 1>...}};
}

// The microkernel for tiles of h rows and nv vectors, 1 <= h <= kMR, 1 <= nv <= kNV. A tile
// narrower than a panel (C's last columns) loads and multiplies only the vectors it has
// columns in: a product 16 columns wide computed 64 on AVX-512 (the portable Winograd's
// GEMMs on a 7x7 output), 4 times the work.
inline MicroFn MicroFor(int64_t h, int64_t nv) {
  static constexpr std::array<MicroFn, kMR* kNV> kTable =
      MicroTable(std::make_index_sequence<kMR * kNV>());
  return kTable[static_cast<size_t>((h - 1) * kNV + (nv - 1))];
}

}  // namespace gemm
}  // namespace HWY_NAMESPACE
}  // namespace ferrite
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
