// portable::segment_rows (segment_reduce_f32.h) per Highway target: a row's accumulators
// live in registers, a strip of up to eight vectors of features at a time, while its edges
// stream through. (Prefetching the source rows of the edges ahead measured no faster: GCN's
// 200k edges x 128 features, 10k nodes.)
#include <algorithm>

#include "compiler/plan/ops.h"
#include "runtime/kernels/portable/segment_reduce_f32.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "runtime/kernels/portable/segment_rows_f32.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ferrite {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <int kVectors>
void Strip(const portable::SegmentRows& j, int64_t r, int64_t f0) {
  const hn::ScalableTag<float> d;
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  using V = hn::Vec<decltype(d)>;
  V acc[kVectors];
  for (int v = 0; v < kVectors; ++v)
    acc[v] = j.data ? hn::LoadU(d, j.data + r * j.data_rs + f0 + v * n) : hn::Zero(d);
  const auto kind = static_cast<ReduceKind>(j.kind);
  for (int64_t p = j.row_ptr[r]; p < j.row_ptr[r + 1]; ++p) {
    const float* xs = j.x + j.src[p] * j.x_rs + f0;
    const V w = hn::Set(d, j.weight ? j.weight[j.edge[p] * j.weight_stride] : 1.0f);
    for (int v = 0; v < kVectors; ++v) {
      V m = hn::LoadU(d, xs + v * n);
      if (j.weight) m = hn::Mul(m, w);
      if (kind == ReduceKind::Sum) {
        acc[v] = hn::Add(acc[v], m);
      } else {
        // As scalar_ops' max / min: the accumulator stays while it is NaN or strictly
        // better; otherwise (ties, a NaN message) the message replaces it.
        const auto keep = kind == ReduceKind::Max ? hn::Gt(acc[v], m) : hn::Lt(acc[v], m);
        acc[v] = hn::IfThenElse(hn::Or(keep, hn::IsNaN(acc[v])), acc[v], m);
      }
    }
  }
  for (int v = 0; v < kVectors; ++v) hn::StoreU(acc[v], d, j.out + r * j.out_rs + f0 + v * n);
}

// The features past the last whole vector, one at a time.
void Tail(const portable::SegmentRows& j, int64_t r, int64_t f0) {
  const auto kind = static_cast<ReduceKind>(j.kind);
  for (int64_t f = f0; f < j.features; ++f) {
    float acc = j.data ? j.data[r * j.data_rs + f] : 0.0f;
    for (int64_t p = j.row_ptr[r]; p < j.row_ptr[r + 1]; ++p) {
      float m = j.x[j.src[p] * j.x_rs + f];
      if (j.weight) m = m * j.weight[j.edge[p] * j.weight_stride];
      if (kind == ReduceKind::Sum) {
        acc = acc + m;
      } else if (!(acc != acc || (kind == ReduceKind::Max ? acc > m : acc < m))) {
        acc = m;
      }
    }
    j.out[r * j.out_rs + f] = acc;
  }
}

void SegmentRowsImpl(const portable::SegmentRows& j, int64_t r0, int64_t r1) {
  const hn::ScalableTag<float> d;
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t r = r0; r < r1; ++r) {
    int64_t f = 0;
    for (; f + 8 * n <= j.features; f += 8 * n) Strip<8>(j, r, f);
    for (; f + 4 * n <= j.features; f += 4 * n) Strip<4>(j, r, f);
    for (; f + n <= j.features; f += n) Strip<1>(j, r, f);
    Tail(j, r, f);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace ferrite
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ferrite {
namespace portable {

HWY_EXPORT(SegmentRowsImpl);

void segment_rows(const SegmentRows& job, int64_t r0, int64_t r1) {
  HWY_DYNAMIC_DISPATCH(SegmentRowsImpl)(job, r0, r1);
}

}  // namespace portable
}  // namespace ferrite
#endif  // HWY_ONCE
