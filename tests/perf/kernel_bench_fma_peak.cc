// The FMA peak of this CPU for the Highway target the portable backend dispatches to: a
// loop of independent multiply-adds on twelve accumulators (more than latency x throughput
// on any current core), so that GEMM and convolution GFLOP/s can be read as a fraction.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "tests/perf/kernel_bench.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/perf/kernel_bench_fma_peak.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ferrite {
namespace bench {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Runs `iters` steps of 12 multiply-adds per lane; returns the lanes per vector and folds
// the accumulators into *sink so the loop is not optimized away.
size_t FmaLoop(int64_t iters, float* sink) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const V m = hn::Set(d, 0.999f), c = hn::Set(d, 1e-3f);
  // Distinct starting values: equal chains would be merged into one by the compiler.
  V a0 = hn::Set(d, 1.0f), a1 = hn::Set(d, 1.1f), a2 = hn::Set(d, 1.2f), a3 = hn::Set(d, 1.3f);
  V a4 = hn::Set(d, 1.4f), a5 = hn::Set(d, 1.5f), a6 = hn::Set(d, 1.6f), a7 = hn::Set(d, 1.7f);
  V a8 = hn::Set(d, 1.8f), a9 = hn::Set(d, 1.9f), a10 = hn::Set(d, 2.0f), a11 = hn::Set(d, 2.1f);
  for (int64_t i = 0; i < iters; ++i) {
    a0 = hn::MulAdd(a0, m, c);
    a1 = hn::MulAdd(a1, m, c);
    a2 = hn::MulAdd(a2, m, c);
    a3 = hn::MulAdd(a3, m, c);
    a4 = hn::MulAdd(a4, m, c);
    a5 = hn::MulAdd(a5, m, c);
    a6 = hn::MulAdd(a6, m, c);
    a7 = hn::MulAdd(a7, m, c);
    a8 = hn::MulAdd(a8, m, c);
    a9 = hn::MulAdd(a9, m, c);
    a10 = hn::MulAdd(a10, m, c);
    a11 = hn::MulAdd(a11, m, c);
  }
  const V s = hn::Add(hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)),
                      hn::Add(hn::Add(hn::Add(a4, a5), hn::Add(a6, a7)),
                              hn::Add(hn::Add(a8, a9), hn::Add(a10, a11))));
  *sink += hn::GetLane(s);
  return hn::Lanes(d);
}

}  // namespace HWY_NAMESPACE
}  // namespace bench
}  // namespace ferrite
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ferrite {
namespace bench {

HWY_EXPORT(FmaLoop);

Summary fma_peak_gflops(int threads, int64_t reps) {
  constexpr int64_t kIters = int64_t{1} << 24;
  std::vector<double> gflops;
  float sink = 0;
  HWY_DYNAMIC_DISPATCH(FmaLoop)(kIters / 16, &sink);  // warm-up (clock ramp)
  for (int64_t r = 0; r < reps; ++r) {
    size_t lanes = 0;
    const Clock::time_point start = Clock::now();
#pragma omp parallel num_threads(threads) reduction(+ : sink)
    {
      const size_t l = HWY_DYNAMIC_DISPATCH(FmaLoop)(kIters, &sink);
#pragma omp master
      lanes = l;
    }
    const double ms = ms_since(start);
    gflops.push_back(2.0 * 12 * static_cast<double>(lanes) * static_cast<double>(kIters) * threads /
                     ms / 1e6);
  }
  return summarize(gflops);
}

}  // namespace bench
}  // namespace ferrite
#endif  // HWY_ONCE
