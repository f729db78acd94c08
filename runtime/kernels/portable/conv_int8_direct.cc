// The vector loops of conv_int8_direct.h, compiled per target by foreach_target.h.
#include "runtime/kernels/portable/conv_int8_direct.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "runtime/kernels/portable/conv_int8_direct.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ferrite {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using D32 = hn::CappedTag<int32_t, kInt8ConvChannelBlock>;

#if HWY_TARGET == HWY_SCALAR
// One lane holds one int16, not a pair: plain loops.
void ConvPoints(const int16_t* const* rows, int64_t points, int64_t taps, int64_t pairs,
                const int16_t* w, int64_t mpad, int32_t* sums) {
  for (int64_t p = 0; p < points; ++p)
    for (int64_t m = 0; m < mpad; ++m) {
      uint32_t acc = 0;  // wraps as the int32 lanes do
      for (int64_t t = 0; t < taps; ++t)
        for (int64_t k = 0; k < 2 * pairs; ++k)
          acc += static_cast<uint32_t>(rows[p * taps + t][k] *
                                       w[((m / kInt8ConvChannelBlock * taps + t) * pairs + k / 2) *
                                             2 * kInt8ConvChannelBlock +
                                         m % kInt8ConvChannelBlock * 2 + k % 2]);
      sums[p * mpad + m] = static_cast<int32_t>(acc);
    }
}
#else
// Points [0, np) (np <= 4; the others repeat point 0, computed and dropped) against output
// channels [m0, m0 + kVecs lanes-worth): 4 x kVecs accumulators, each pair of input channels
// one broadcast of the point's pair and one widening multiply-add per vector of weights.
template <int kVecs>
void PointsBlock(const int16_t* const* rows, int np, int64_t taps, int64_t pairs, const int16_t* w,
                 int64_t mpad, int64_t m0, int32_t* sums) {
  const D32 d32;
  const hn::Repartition<int16_t, D32> d16;
  using V = hn::Vec<D32>;
  const int64_t n = static_cast<int64_t>(hn::Lanes(d32));
  V s0[4][kVecs], s1[4][kVecs];
  for (int p = 0; p < 4; ++p)
    for (int v = 0; v < kVecs; ++v) s0[p][v] = s1[p][v] = hn::Zero(d32);
  // Vector v's weights: a run of 2 * kInt8ConvChannelBlock values per (tap, pair), read in order.
  const int16_t* wb[kVecs];
  for (int v = 0; v < kVecs; ++v) {
    const int64_t m = m0 + v * n;
    wb[v] = w + m / kInt8ConvChannelBlock * taps * pairs * 2 * kInt8ConvChannelBlock +
            m % kInt8ConvChannelBlock * 2;
  }
  for (int64_t t = 0; t < taps; ++t) {
    const int16_t* r[4];
    for (int p = 0; p < 4; ++p) r[p] = rows[(p < np ? p : 0) * taps + t];
    for (int64_t k = 0; k < pairs; ++k) {
      const int64_t at = (t * pairs + k) * 2 * kInt8ConvChannelBlock;
      hn::Vec<decltype(d16)> wv[kVecs];
      for (int v = 0; v < kVecs; ++v) wv[v] = hn::LoadU(d16, wb[v] + at);
      for (int p = 0; p < 4; ++p) {
        int32_t pair;
        std::memcpy(&pair, r[p] + 2 * k, sizeof(pair));
        const auto xv = hn::BitCast(d16, hn::Set(d32, pair));
        for (int v = 0; v < kVecs; ++v)
          s0[p][v] = hn::ReorderWidenMulAccumulate(d32, xv, wv[v], s0[p][v], s1[p][v]);
      }
    }
  }
  for (int p = 0; p < np; ++p)
    for (int v = 0; v < kVecs; ++v)
      hn::StoreU(hn::RearrangeToOddPlusEven(s0[p][v], s1[p][v]), d32, sums + p * mpad + m0 + v * n);
}

// Output channels outer: a block of them keeps its weights (taps x pairs x 2 vectors) in
// cache while every point of the chunk passes; points inner, 4 at a time.
void ConvPoints(const int16_t* const* rows, int64_t points, int64_t taps, int64_t pairs,
                const int16_t* w, int64_t mpad, int32_t* sums) {
  const int64_t n = static_cast<int64_t>(hn::Lanes(D32()));
  int64_t m0 = 0;
  for (; m0 + 2 * n <= mpad; m0 += 2 * n)
    for (int64_t p0 = 0; p0 < points; p0 += 4)
      PointsBlock<2>(rows + p0 * taps, static_cast<int>(std::min<int64_t>(4, points - p0)), taps,
                     pairs, w, mpad, m0, sums + p0 * mpad);
  for (; m0 < mpad; m0 += n)
    for (int64_t p0 = 0; p0 < points; p0 += 4)
      PointsBlock<1>(rows + p0 * taps, static_cast<int>(std::min<int64_t>(4, points - p0)), taps,
                     pairs, w, mpad, m0, sums + p0 * mpad);
}
#endif  // HWY_TARGET == HWY_SCALAR

// A vector of channels at a time, its weights for up to kDepthwiseTaps taps held in
// registers while every point of the chunk passes (a 3x3 window: one group).
constexpr int64_t kDepthwiseTaps = 9;

void DepthwisePoints(const int16_t* const* rows, int64_t points, int64_t taps, const int16_t* w,
                     int64_t cpad, int32_t* sums) {
  const D32 d32;
  const hn::Rebind<int16_t, D32> d16;
  using V = hn::Vec<D32>;
  const int64_t n = static_cast<int64_t>(hn::Lanes(d32));
  for (int64_t c = 0; c < cpad; c += n) {
    for (int64_t t0 = 0; t0 < taps; t0 += kDepthwiseTaps) {
      const int64_t group = std::min(kDepthwiseTaps, taps - t0);
      V wv[kDepthwiseTaps];
      for (int64_t j = 0; j < group; ++j)
        wv[j] = hn::PromoteTo(d32, hn::LoadU(d16, w + (t0 + j) * cpad + c));
      for (int64_t p = 0; p < points; ++p) {
        const int16_t* const* r = rows + p * taps + t0;
        int32_t* out = sums + p * cpad + c;
        V acc = t0 == 0 ? hn::Zero(d32) : hn::LoadU(d32, out);
        for (int64_t j = 0; j < group; ++j)
          acc = hn::Add(acc, hn::Mul(hn::PromoteTo(d32, hn::LoadU(d16, r[j] + c)), wv[j]));
        hn::StoreU(acc, d32, out);
      }
    }
  }
}

void Finish(const int32_t* sums, int64_t points, int64_t mpad, const int32_t* bias,
            const float* mult, float yz, float type_lo, float type_hi, float lo, float hi,
            int32_t* q, uint8_t* const* bytes, int64_t count, bool y_signed) {
  const D32 d32;
  const hn::Rebind<float, D32> df;
  const hn::Rebind<uint8_t, D32> du8;
  const hn::Rebind<int8_t, D32> di8;
  const int64_t n = static_cast<int64_t>(hn::Lanes(d32));
  const auto z = hn::Set(df, yz);
  const auto tlo = hn::Set(df, type_lo), thi = hn::Set(df, type_hi);
  const auto vlo = hn::Set(df, lo), vhi = hn::Set(df, hi);
  // [lo, hi] inside the type's range (a Clip's, or the type's own): one clamp does both.
  const bool nested = lo >= type_lo && hi <= type_hi;
  // Integral floats of magnitude below 2^22 plus 1.5 * 2^23 hold the integer in their low
  // mantissa bits: a conversion in two operations, where ConvertTo also fixes overflows.
  const bool small = std::fabs(type_lo) < 4194304.0f && std::fabs(type_hi) < 4194304.0f;
  const auto magic = hn::Set(df, 12582912.0f);
  const auto magic_bits = hn::BitCast(d32, magic);
  auto finish = [&](const int32_t* sp, int64_t i) {
    const auto s = hn::Add(hn::LoadU(d32, sp + i), hn::LoadU(d32, bias + i));
    if (!mult) return s;
    auto r = hn::Add(hn::Round(hn::Mul(hn::ConvertTo(df, s), hn::LoadU(df, mult + i))), z);
    r = hn::IfThenElse(hn::Eq(r, r), r, z);
    if (nested) {
      r = hn::Min(hn::Max(r, vlo), vhi);
    } else {
      r = hn::Min(hn::Max(r, tlo), thi);
      r = hn::Min(hn::Max(r, vlo), vhi);
    }
    return small ? hn::Sub(hn::BitCast(d32, hn::Add(r, magic)), magic_bits) : hn::ConvertTo(d32, r);
  };
  if (!bytes) {
    for (int64_t p = 0; p < points; ++p)
      for (int64_t i = 0; i < mpad; i += n)
        hn::StoreU(finish(sums + p * mpad, i), d32, q + p * mpad + i);
    return;
  }
  // Requantized values (inside the 8-bit type) narrowed into each point's `count` bytes;
  // the last partial vector through a buffer, so that no byte past them is written.
  int32_t tail[kInt8ConvChannelBlock] = {};
  for (int64_t p = 0; p < points; ++p) {
    uint8_t* dst = bytes[p];
    for (int64_t i = 0; i < count; i += n) {
      const auto v = finish(sums + p * mpad, i);
      if (i + n <= count) {
        if (y_signed) {
          hn::StoreU(hn::DemoteTo(di8, v), di8, reinterpret_cast<int8_t*>(dst + i));
        } else {
          hn::StoreU(hn::DemoteTo(du8, v), du8, dst + i);
        }
      } else {
        hn::StoreU(v, d32, tail);
        for (int64_t j = 0; j < count - i; ++j)
          dst[i + j] = static_cast<uint8_t>(static_cast<uint32_t>(tail[j]));
      }
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace ferrite
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ferrite {

HWY_EXPORT(ConvPoints);
HWY_EXPORT(DepthwisePoints);
HWY_EXPORT(Finish);

void int8_conv_points(const int16_t* const* rows, int64_t points, int64_t taps, int64_t pairs,
                      const int16_t* w, int64_t mpad, int32_t* sums) {
  HWY_DYNAMIC_DISPATCH(ConvPoints)(rows, points, taps, pairs, w, mpad, sums);
}

void int8_depthwise_points(const int16_t* const* rows, int64_t points, int64_t taps,
                           const int16_t* w, int64_t cpad, int32_t* sums) {
  HWY_DYNAMIC_DISPATCH(DepthwisePoints)(rows, points, taps, w, cpad, sums);
}

void int8_conv_finish(const int32_t* sums, int64_t points, int64_t mpad, const int32_t* bias,
                      const float* mult, float yz, float type_lo, float type_hi, float lo, float hi,
                      int32_t* q) {
  HWY_DYNAMIC_DISPATCH(Finish)
  (sums, points, mpad, bias, mult, yz, type_lo, type_hi, lo, hi, q, nullptr, 0, false);
}

void int8_conv_finish_bytes(const int32_t* sums, int64_t points, int64_t mpad, const int32_t* bias,
                            const float* mult, float yz, float type_lo, float type_hi, float lo,
                            float hi, bool y_signed, int64_t count, uint8_t* const* bytes) {
  HWY_DYNAMIC_DISPATCH(Finish)
  (sums, points, mpad, bias, mult, yz, type_lo, type_hi, lo, hi, nullptr, bytes, count, y_signed);
}

}  // namespace ferrite
#endif  // HWY_ONCE
