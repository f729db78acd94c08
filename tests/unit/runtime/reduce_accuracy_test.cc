// Long float32 sums on every backend (pairwise_sum.h's scheme): a sum of more than 2^24 ones
// is exact (one running float sum stops at 2^24), and so is one of 2^30 ones (read from one
// broadcast element, no 4 GB input); sums and means of large random arrays, in each way the
// backends lay lanes over a reduction (long rows, short rows, columns), stay within 2e-6 of
// the double-precision sum, and give the same bits for 1 and 2 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "compiler/plan/pairwise_sum.h"
#include "tests/unit/runtime/kernel_builder.h"

namespace ferrite {
namespace testing {
namespace {

// The aarch64 build's tests run under qemu, about 30 times slower (the scalar reference 100
// times), the ASan build's about 5 times: there the largest cases shrink, and the reference
// sums only random arrays (the same C++ as natively).
#if defined(__aarch64__) || defined(__SANITIZE_ADDRESS__)
constexpr bool kSlowBuild = true;
#else
constexpr bool kSlowBuild = false;
#endif

TEST(PairwiseSum, LeavesOfOnesAddExactly) {
  // 2^20 leaves of 1024 ones and a last, unfinished leaf of 4: 2^30 + 4, where a running
  // sum of the ones would stop at 2^24. Lane 1's first leaf is large: the others still count.
  PairwiseSum<float> p;
  p.reset(2);
  float acc[2] = {0, 0};
  for (int64_t i = 0; i < (int64_t{1} << 20); ++i) {
    acc[0] = 1024;
    acc[1] = i == 0 ? 1e8f : 1024;
    p.push(acc);
    ASSERT_EQ(acc[0], 0.0f);
  }
  acc[0] = 4;
  p.finish(acc);
  EXPECT_EQ(acc[0], 1073741828.0f);
  EXPECT_NEAR(acc[1], 1e8 + 1024.0 * ((int64_t{1} << 20) - 1), 64);
}

// sum(x[0]) over n reduction points: every point reads the one element (1.0).
Kernel sum_of_broadcast(int64_t n) {
  KernelBuilder b({n}, 1);
  const int x = b.arg(DType::F32, 1), y = b.arg(DType::F32, 1, true);
  const int s = b.reduce(ReduceKind::Sum, b.load(x, C(0)));
  b.post();
  b.store(y, C(0), s);
  return b.build();
}

float run_sum_of_ones(const std::string& backend, int64_t n) {
  const std::vector<Tensor> out =
      run_kernel(backend, sum_of_broadcast(n),
                 tensors(make_tensor(DType::F32, std::vector<float>{1}), zeros(DType::F32, 1)));
  return f32_at(out[1], 0);
}

TEST(ReduceAccuracy, SumOfOnesPast2To24) {
  const int64_t n = (int64_t{1} << 24) + 129;
  for (const std::string& backend : backend_names()) {
    if (kSlowBuild && backend == "reference") continue;
    EXPECT_EQ(run_sum_of_ones(backend, n), static_cast<float>(n)) << backend;
  }
}

TEST(ReduceAccuracy, SumOf2To30Ones) {
  const int64_t n = int64_t{1} << (kSlowBuild ? 26 : 30);
  for (const std::string& backend : backend_names()) {
    // The scalar reference would take about a minute; its sum is the same PairwiseSum.
    if (backend == "reference") continue;
    EXPECT_EQ(run_sum_of_ones(backend, n), static_cast<float>(n)) << backend;
  }
}

// How the reduction sits in memory: `rows` outputs, each the sum (and mean) of n values.
//   long rows   x[r, c], n contiguous values per output
//   short rows  x[r, h, w] over (h, w), rows of w values padded to w + 3 (two reduce dims)
//   columns     x[c, r], the reduced values strided by `rows` (lanes go on the outputs)
struct Shape {
  const char* name;
  int64_t rows, h, w;  // n = h * w
  bool columns;
  int64_t n() const { return h * w; }
  int64_t elements() const { return columns ? n() * rows : rows * h * (w + 3); }
  int64_t at(int64_t r, int64_t i) const {
    return columns ? i * rows + r : r * h * (w + 3) + i / w * (w + 3) + i % w;
  }
};

// sum and mean (sum * 1/n) of each row, as two outputs.
Kernel sum_and_mean(const Shape& s) {
  const bool two = !s.columns && s.w < s.n();
  KernelBuilder b(
      two ? std::vector<int64_t>{s.rows, s.h, s.w} : std::vector<int64_t>{s.rows, s.n()},
      two ? 2 : 1);
  const int x = b.arg(DType::F32, s.elements());
  const int sum = b.arg(DType::F32, s.rows, true), mean = b.arg(DType::F32, s.rows, true);
  Index at = s.columns ? Affine({{1, s.rows}, {0, 1}})
             : two     ? Affine({{0, s.h * (s.w + 3)}, {1, s.w + 3}, {2, 1}})
                       : Affine({{0, s.h * (s.w + 3)}, {1, 1}});
  const int r = b.reduce(ReduceKind::Sum, b.load(x, at));
  b.post();
  b.store(sum, V(0), r);
  b.store(mean, V(0),
          b.binary(Op::Mul, r, b.constant(ScalarType::F32, 1.0 / static_cast<double>(s.n()))));
  return b.build();
}

TEST(ReduceAccuracy, RandomSumsAndMeansMatchDouble) {
  const int shrink = kSlowBuild ? 3 : 0;
  const Shape shapes[] = {{"long rows", 2, 1, int64_t{1} << (20 - shrink), false},
                          {"short rows", 2, int64_t{1} << (15 - shrink), 24, false},
                          {"columns", 16, 1, int64_t{1} << (17 - shrink), true}};
  for (const Shape& s : shapes) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(0, 1);
    std::vector<float> xs(static_cast<size_t>(s.elements()));
    for (float& v : xs) v = dist(rng);
    const Kernel k = sum_and_mean(s);
    const std::vector<Tensor> in =
        tensors(make_tensor(DType::F32, xs), zeros(DType::F32, s.rows), zeros(DType::F32, s.rows));
    for (const std::string& backend : backend_names()) {
      SCOPED_TRACE(std::string(s.name) + " on " + backend);
      const std::vector<Tensor> got = run_kernel(backend, k, in);
      for (int64_t r = 0; r < s.rows; ++r) {
        double want = 0;
        for (int64_t i = 0; i < s.n(); ++i) want += xs[static_cast<size_t>(s.at(r, i))];
        EXPECT_NEAR(f32_at(got[1], r), want, 2e-6 * want) << "sum of row " << r;
        const double mean = want / static_cast<double>(s.n());
        EXPECT_NEAR(f32_at(got[2], r), mean, 2e-6 * mean) << "mean of row " << r;
      }
      // The same bits with two threads (the scalar reference has one).
      if (backend == "reference") continue;
      BackendOptions two;
      two.threads = 2;
      std::vector<Tensor> out;
      std::vector<void*> args;
      for (const Tensor& t : in) out.push_back(copy_of(t));
      for (Tensor& t : out) args.push_back(t.data());
      make_backend(backend, two)->prepare(k)->run(args.data());
      for (int64_t r = 0; r < s.rows; ++r) {
        EXPECT_EQ(f32_at(out[1], r), f32_at(got[1], r)) << "2 threads, row " << r;
      }
    }
  }
}

// prod(x) and prod(x) / prod(y) over n points: the reference multiplies in float64 and
// rounds once (interpret.cc), so a product whose partial products leave float32's range
// is the exact product's rounding, whatever order the factors come in.
Kernel products(int64_t n) {
  KernelBuilder b({n}, 1);
  const int x = b.arg(DType::F32, n), y = b.arg(DType::F32, n);
  const int prod = b.arg(DType::F32, 1, true), ratio = b.arg(DType::F32, 1, true);
  const int px = b.reduce(ReduceKind::Prod, b.load(x, V(0)));
  const int py = b.reduce(ReduceKind::Prod, b.load(y, V(0)));
  b.post();
  b.store(prod, C(0), px);
  b.store(ratio, C(0), b.binary(Op::Div, px, py));
  return b.build();
}

TEST(ReduceAccuracy, ReferenceProductsRoundOnce) {
  // 1e-30 * 1e-30 * 1e30 * 1e30: a running float32 product is 0 after two factors.
  const std::vector<Tensor> ones =
      run_kernel("reference", products(4),
                 tensors(make_tensor(DType::F32, std::vector<float>{1e-30f, 1e-30f, 1e30f, 1e30f}),
                         make_tensor(DType::F32, std::vector<float>{2, 2, 2, 2}),
                         zeros(DType::F32, 1), zeros(DType::F32, 1)));
  EXPECT_FLOAT_EQ(f32_at(ones[2], 0), 1.0f);
  EXPECT_FLOAT_EQ(f32_at(ones[3], 0), 1.0f / 16);
  // 2160 factors of 0.86 (a fuzz finding): the exact product, 6e-142, rounds to 0, where a
  // running float32 product stops at the smallest subnormals (0.86 of 3 of them rounds back
  // to 3) and a quotient of two such products came out 1, not a backend's 0 / 0.
  const int64_t n = 2160;
  const std::vector<Tensor> small =
      run_kernel("reference", products(n),
                 tensors(make_tensor(DType::F32, std::vector<float>(n, 0.86f)),
                         make_tensor(DType::F32, std::vector<float>(n, -0.845f)),
                         zeros(DType::F32, 1), zeros(DType::F32, 1)));
  EXPECT_EQ(f32_at(small[2], 0), 0.0f);
  EXPECT_TRUE(std::isnan(f32_at(small[3], 0)));
  for (const std::string& backend : backend_names()) {
    const std::vector<Tensor> got =
        run_kernel(backend, products(n),
                   tensors(make_tensor(DType::F32, std::vector<float>(n, 0.86f)),
                           make_tensor(DType::F32, std::vector<float>(n, -0.845f)),
                           zeros(DType::F32, 1), zeros(DType::F32, 1)));
    EXPECT_EQ(f32_at(got[2], 0), 0.0f) << backend;
    EXPECT_TRUE(std::isnan(f32_at(got[3], 0))) << backend;
  }
}

}  // namespace
}  // namespace testing
}  // namespace ferrite
