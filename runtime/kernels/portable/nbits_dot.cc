// The direct kernel of matmul_nbits_f32.h: dot products of up to 4 permuted rows of A with
// W's columns decoded from their codes, compiled per target by foreach_target.h.
#include <cstdint>

#include "runtime/kernels/portable/matmul_nbits_f32.h"
#include "runtime/kernels/reference/matmul_nbits.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "runtime/kernels/portable/nbits_dot.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ferrite {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Phase J of a vector of code bytes widened to 32-bit lanes, v: the codes (v >> bits * J) &
// mask (the last phase is the byte's top bits: nothing above them to mask), as floats,
// times A's permuted floats at J * blob + i, into part[r][J & 1].
template <int kBits, int J, int R, class DF, class VU>
HWY_INLINE void Phase(DF df, VU v, const float* const* a, int64_t i, int64_t blob,
                      hn::Vec<DF> (*part)[2]) {
  constexpr int kPhases = 8 / kBits;
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  VU code = v;
  if (J > 0) code = hn::ShiftRight<kBits * J>(code);
  if (J < kPhases - 1) code = hn::And(code, hn::Set(du, (1u << kBits) - 1));
  const auto q = hn::ConvertTo(df, hn::BitCast(di, code));
  for (int r = 0; r < R; ++r)
    part[r][J & 1] = hn::MulAdd(hn::LoadU(df, a[r] + J * blob + i), q, part[r][J & 1]);
}

// One block of one column: acc[r] += s * sum_k a[r][k] * code_k, the block's bytes a
// vector of lanes at a time, each widened to 32 bits once and split into its 8 / bits
// phases. The zero point's share, s * z * sum_k a[r][k], is the caller's. Two partial sums
// per row (even and odd phases) keep two multiply-add chains in flight.
template <int kBits, int R, class DF>
HWY_INLINE void Block(DF df, const uint8_t* bytes, int64_t blob, float s, const float* const* a,
                      hn::Vec<DF>* acc) {
  constexpr int kPhases = 8 / kBits;
  const hn::RebindToUnsigned<DF> du;
  const hn::Rebind<uint8_t, DF> d8;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  hn::Vec<DF> part[R][2];
  for (int r = 0; r < R; ++r) part[r][0] = part[r][1] = hn::Zero(df);
  for (int64_t i = 0; i < blob; i += lanes) {
    const auto v = hn::PromoteTo(du, hn::LoadU(d8, bytes + i));
    Phase<kBits, 0, R>(df, v, a, i, blob, part);
    if constexpr (kPhases > 1) Phase<kBits, 1, R>(df, v, a, i, blob, part);
    if constexpr (kPhases > 2) {
      Phase<kBits, 2, R>(df, v, a, i, blob, part);
      Phase<kBits, 3, R>(df, v, a, i, blob, part);
    }
  }
  const auto sv = hn::Set(df, s);
  for (int r = 0; r < R; ++r) acc[r] = hn::MulAdd(sv, hn::Add(part[r][0], part[r][1]), acc[r]);
}

// sum_i x[i] * y[i] for i < n.
template <class DF>
HWY_INLINE float Dot(DF df, const float* x, const float* y, int64_t n) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  auto acc = hn::Zero(df);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes)
    acc = hn::MulAdd(hn::LoadU(df, x + i), hn::LoadU(df, y + i), acc);
  float sum = hn::GetLane(hn::SumOfLanes(df, acc));
  for (; i < n; ++i) sum += x[i] * y[i];
  return sum;
}

// C[r, n] = sum over blocks of s * sum_k a[r][k] * code_k, minus the zero points' shares
// sum over blocks of s * z * sum_k a[r][k] (t.zs: s * z per column and block; t.a_sums: A's
// sum per row and block): the codes times A in the vector lanes, then one dot product.
template <int kBits, int R, class DF>
void ColumnsWith(DF df, const NBitsRowsTask& t, int64_t n0, int64_t n1) {
  const MatMulNBitsArgs& g = *t.g;
  const hn::ScalableTag<float> dfull;
  for (int64_t n = n0; n < n1; ++n) {
    hn::Vec<DF> acc[R];
    for (int r = 0; r < R; ++r) acc[r] = hn::Zero(df);
    const float* scales = g.scales + n * g.blocks;
    const uint8_t* codes = g.codes_of(n, 0);
    for (int64_t blk = 0; blk < g.blocks; ++blk) {
      const float* a[R];
      for (int r = 0; r < R; ++r) a[r] = t.a_rows + r * t.a_stride + blk * g.block;
      Block<kBits, R>(df, codes + blk * g.blob, g.blob, scales[blk], a, acc);
    }
    for (int r = 0; r < R; ++r) {
      const float shift = Dot(dfull, t.zs + n * g.blocks, t.a_sums + r * g.blocks, g.blocks);
      t.c[r * t.c_rs + n * t.c_cs] = hn::GetLane(hn::SumOfLanes(df, acc[r])) - shift;
    }
  }
}

// The widest vector whose lanes divide a block's bytes (blob is a power of 2, at least 4).
template <int kBits, int R>
void Columns(const NBitsRowsTask& t, int64_t n0, int64_t n1) {
  const hn::ScalableTag<float> df;
  const hn::CappedTag<float, 8> d8;
  const hn::CappedTag<float, 4> d4;
  const auto fits = [&](size_t lanes) { return t.g->blob % static_cast<int64_t>(lanes) == 0; };
  if (fits(hn::Lanes(df))) return ColumnsWith<kBits, R>(df, t, n0, n1);
  if (fits(hn::Lanes(d8))) return ColumnsWith<kBits, R>(d8, t, n0, n1);
  ColumnsWith<kBits, R>(d4, t, n0, n1);
}

template <int kBits>
void ColumnsOfBits(const NBitsRowsTask& t, int64_t n0, int64_t n1) {
  switch (t.rows) {
    case 1:
      return Columns<kBits, 1>(t, n0, n1);
    case 2:
      return Columns<kBits, 2>(t, n0, n1);
    case 3:
      return Columns<kBits, 3>(t, n0, n1);
    default:
      return Columns<kBits, 4>(t, n0, n1);
  }
}

void DotColumns(const NBitsRowsTask& t, int64_t n0, int64_t n1) {
  if (t.g->bits == 2) return ColumnsOfBits<2>(t, n0, n1);
  if (t.g->bits == 4) return ColumnsOfBits<4>(t, n0, n1);
  ColumnsOfBits<8>(t, n0, n1);
}

}  // namespace HWY_NAMESPACE
}  // namespace ferrite
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ferrite {

HWY_EXPORT(DotColumns);

void nbits_dot_columns(const NBitsRowsTask& t, int64_t n0, int64_t n1) {
  HWY_DYNAMIC_DISPATCH(DotColumns)(t, n0, n1);
}

}  // namespace ferrite
#endif  // HWY_ONCE
