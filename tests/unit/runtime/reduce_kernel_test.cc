// Reduction kernels on both backends against naive C++ loops written here: over the
// innermost dim, over two trailing dims with a post op (mean), and along a strided axis
// (where the portable backend puts its lanes on the outer dim).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tests/unit/runtime/kernel_builder.h"

namespace ferrite {
namespace testing {
namespace {

const char* const kBackends[] = {"reference", "portable"};

std::vector<float> values(int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2, 2);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

bool is_arg(ReduceKind k) {
  return k == ReduceKind::ArgMax || k == ReduceKind::ArgMin;
}

// Naive reduction of xs[begin + i * stride], i < n. Arg kinds return the index (first wins).
double naive(ReduceKind k, const std::vector<float>& xs, int64_t begin, int64_t stride, int64_t n) {
  double acc = k == ReduceKind::Prod ? 1 : k == ReduceKind::Sum ? 0 : xs[begin];
  int64_t best = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double x = xs[begin + i * stride];
    switch (k) {
      case ReduceKind::Sum:
        acc += x;
        break;
      case ReduceKind::Prod:
        acc *= x;
        break;
      case ReduceKind::Max:
      case ReduceKind::ArgMax:
        if (x > acc) acc = x, best = i;
        break;
      default:
        if (x < acc) acc = x, best = i;
    }
  }
  return is_arg(k) ? static_cast<double>(best) : acc;
}

void expect_result(ReduceKind k, const Tensor& out, int64_t i, double want,
                   const std::string& what) {
  if (is_arg(k)) {
    EXPECT_EQ(load_element(DType::I64, out.data(), i).i64, static_cast<int64_t>(want)) << what;
  } else {
    EXPECT_NEAR(f32_at(out, i), want, 1e-4 * std::max(1.0, std::fabs(want))) << what;
  }
}

// out[r] = reduce_k(x[r, 0:cols]).
Kernel row_reduce(ReduceKind kind, int64_t rows, int64_t cols) {
  KernelBuilder b({rows, cols}, 1);
  const int x = b.arg(DType::F32, rows * cols);
  const int out = b.arg(is_arg(kind) ? DType::I64 : DType::F32, rows, true);
  const int red = b.reduce(kind, b.load(x, Affine({{0, cols}, {1, 1}})));
  b.post();
  b.store(out, V(0), red);
  return b.build();
}

TEST(ReduceKernel, InnermostDimAllKinds) {
  for_each_simd_target([&] {
    const ReduceKind kinds[] = {ReduceKind::Sum, ReduceKind::Prod,   ReduceKind::Max,
                                ReduceKind::Min, ReduceKind::ArgMax, ReduceKind::ArgMin};
    for (ReduceKind kind : kinds) {
      for (int64_t cols : {1, 7, 64, 300, 1000}) {
        const int64_t rows = 3;
        std::vector<float> xs = values(rows * cols, static_cast<unsigned>(cols));
        if (kind == ReduceKind::Prod)
          for (float& x : xs) x = 1.0f + x / 1000;  // keep the product finite
        if (cols > 10) xs[5] = xs[cols - 2];        // a tie: the first occurrence wins
        const Kernel k = row_reduce(kind, rows, cols);
        const DType odt = is_arg(kind) ? DType::I64 : DType::F32;
        for (const char* backend : kBackends) {
          const auto got =
              run_kernel(backend, k, tensors(make_tensor(DType::F32, xs), zeros(odt, rows)));
          for (int64_t r = 0; r < rows; ++r)
            expect_result(
                kind, got[1], r, naive(kind, xs, r * cols, 1, cols),
                std::string(backend) + " " + reduce_name(kind) + " cols=" + std::to_string(cols));
        }
      }
    }
  });
}

// mean over the two trailing dims: out[n] = sum(x[n, :, :]) * (1 / (h * w)).
TEST(ReduceKernel, MeanOverTwoTrailingDims) {
  for (int64_t w : {3, 40, 300}) {
    const int64_t n = 4, h = 5;
    KernelBuilder b({n, h, w}, 2);
    const int x = b.arg(DType::F32, n * h * w), out = b.arg(DType::F32, n, true);
    const int s = b.reduce(ReduceKind::Sum, b.load(x, Affine({{0, h * w}, {1, w}, {2, 1}})));
    const int scale = b.constant(ScalarType::F32, 1.0 / static_cast<double>(h * w));
    b.post();
    b.store(out, V(0), b.binary(Op::Mul, s, scale));
    const Kernel k = b.build();
    const std::vector<float> xs = values(n * h * w, 11);
    for (const char* backend : kBackends) {
      const auto got =
          run_kernel(backend, k, tensors(make_tensor(DType::F32, xs), zeros(DType::F32, n)));
      for (int64_t i = 0; i < n; ++i)
        expect_result(ReduceKind::Sum, got[1], i,
                      naive(ReduceKind::Sum, xs, i * h * w, 1, h * w) / (h * w), backend);
    }
  }
}

// Reduce axis 0 of x[K, N]: out[j] = reduce(x[:, j]); the reduction walks stride N while
// the outer dim is contiguous. Also a post op reading two Reduce results (max - min) and
// a Row-level bias load.
TEST(ReduceKernel, AlongStridedAxisWithPostOps) {
  for (int64_t cols : {5, 33, 600}) {
    const int64_t rows = 9;
    KernelBuilder b({cols, rows}, 1);
    const int x = b.arg(DType::F32, rows * cols), bias = b.arg(DType::F32, cols);
    const int o1 = b.arg(DType::F32, cols, true), o2 = b.arg(DType::I64, cols, true);
    const int v = b.load(x, Affine({{1, cols}, {0, 1}}));
    const int mx = b.reduce(ReduceKind::Max, v), mn = b.reduce(ReduceKind::Min, v);
    const int am = b.reduce(ReduceKind::ArgMin, v);
    b.post();
    b.store(o1, V(0), b.binary(Op::Add, b.binary(Op::Sub, mx, mn), b.load(bias, V(0))));
    b.store(o2, V(0), am);
    const Kernel k = b.build();
    const std::vector<float> xs = values(rows * cols, 12), bs = values(cols, 13);
    for (const char* backend : kBackends) {
      const auto got = run_kernel(backend, k,
                                  tensors(make_tensor(DType::F32, xs), make_tensor(DType::F32, bs),
                                          zeros(DType::F32, cols), zeros(DType::I64, cols)));
      for (int64_t j = 0; j < cols; ++j) {
        const double want = naive(ReduceKind::Max, xs, j, cols, rows) -
                            naive(ReduceKind::Min, xs, j, cols, rows) + bs[j];
        expect_result(ReduceKind::Max, got[2], j, want, backend);
        expect_result(ReduceKind::ArgMin, got[3], j, naive(ReduceKind::ArgMin, xs, j, cols, rows),
                      backend);
      }
    }
  }
}

// Every kind along a strided axis (lanes on the outer dim, one accumulator per lane), with
// ties (first occurrence wins) and a NaN column (Max/ArgMax propagate it).
TEST(ReduceKernel, AllKindsAlongStridedAxis) {
  for_each_simd_target([&] {
    const ReduceKind kinds[] = {ReduceKind::Sum, ReduceKind::Prod,   ReduceKind::Max,
                                ReduceKind::Min, ReduceKind::ArgMax, ReduceKind::ArgMin};
    const int64_t rows = 6, cols = 300;
    std::vector<float> xs = values(rows * cols, 21);
    for (int64_t j = 0; j < cols; j += 3) xs[4 * cols + j] = xs[1 * cols + j];  // ties
    for (ReduceKind kind : kinds) {
      KernelBuilder b({cols, rows}, 1);
      const int x = b.arg(DType::F32, rows * cols);
      const int out = b.arg(is_arg(kind) ? DType::I64 : DType::F32, cols, true);
      const int red = b.reduce(kind, b.load(x, Affine({{1, cols}, {0, 1}})));
      b.post();
      b.store(out, V(0), red);
      const Kernel k = b.build();
      const DType odt = is_arg(kind) ? DType::I64 : DType::F32;
      for (const char* backend : kBackends) {
        const auto got =
            run_kernel(backend, k, tensors(make_tensor(DType::F32, xs), zeros(odt, cols)));
        for (int64_t j = 0; j < cols; ++j)
          expect_result(
              kind, got[1], j, naive(kind, xs, j, cols, rows),
              std::string(backend) + " " + reduce_name(kind) + " col " + std::to_string(j));
      }
    }
  });
}

// Variance-style: out[r] = sum((x[r, c] - m[r])^2) with m loaded per row (a Row-level value
// broadcast into the lanes), in both lane placements (row-major and column-major x).
TEST(ReduceKernel, RowLevelOperandInsideTheReduction) {
  for (bool column_major : {false, true}) {
    const int64_t rows = 40, cols = 70;
    KernelBuilder b({rows, cols}, 1);
    const int x = b.arg(DType::F32, rows * cols), m = b.arg(DType::F32, rows);
    const int out = b.arg(DType::F32, rows, true);
    const Index ix = column_major ? Affine({{1, rows}, {0, 1}}) : Affine({{0, cols}, {1, 1}});
    const int d = b.binary(Op::Sub, b.load(x, ix), b.load(m, V(0)));
    const int s = b.reduce(ReduceKind::Sum, b.binary(Op::Mul, d, d));
    b.post();
    b.store(out, V(0), s);
    const Kernel k = b.build();
    const std::vector<float> xs = values(rows * cols, 31), ms = values(rows, 32);
    for (const char* backend : kBackends) {
      const auto got = run_kernel(backend, k,
                                  tensors(make_tensor(DType::F32, xs), make_tensor(DType::F32, ms),
                                          zeros(DType::F32, rows)));
      for (int64_t r = 0; r < rows; ++r) {
        double want = 0;
        for (int64_t c = 0; c < cols; ++c) {
          const double v = xs[column_major ? c * rows + r : r * cols + c] - ms[r];
          want += v * v;
        }
        expect_result(ReduceKind::Sum, got[2], r, want, backend);
      }
    }
  }
}

// A full reduction (no outer dims) over two dims: out[0] = sum(x) / n.
TEST(ReduceKernel, FullReductionToScalar) {
  const int64_t h = 30, w = 50;
  KernelBuilder b({h, w}, 2);
  const int x = b.arg(DType::F32, h * w), out = b.arg(DType::F32, 1, true);
  const int s = b.reduce(ReduceKind::Sum, b.load(x, Affine({{0, w}, {1, 1}})));
  b.post();
  b.store(out, C(0), b.binary(Op::Div, s, b.constant(ScalarType::F32, static_cast<double>(h * w))));
  const Kernel k = b.build();
  const std::vector<float> xs = values(h * w, 41);
  for (const char* backend : kBackends) {
    const auto got =
        run_kernel(backend, k, tensors(make_tensor(DType::F32, xs), zeros(DType::F32, 1)));
    expect_result(ReduceKind::Sum, got[1], 0, naive(ReduceKind::Sum, xs, 0, 1, h * w) / (h * w),
                  backend);
  }
}

// A reduction over an empty dim yields the identity (sum 0, max -inf) in the post phase,
// and the body's Consts hold there though the body never ran.
TEST(ReduceKernel, EmptyReductionGivesIdentity) {
  KernelBuilder b({3, 0}, 1);
  const int x = b.arg(DType::F32, 0), o1 = b.arg(DType::F32, 3, true),
            o2 = b.arg(DType::F32, 3, true);
  const int v = b.load(x, Affine({{0, 0}, {1, 1}}));
  const int half = b.constant(ScalarType::F32, 0.5);
  const int s = b.reduce(ReduceKind::Sum, v), m = b.reduce(ReduceKind::Max, v);
  b.post();
  b.store(o1, V(0), b.binary(Op::Add, s, half));
  b.store(o2, V(0), m);
  const Kernel k = b.build();
  for (const char* backend : kBackends) {
    const auto got = run_kernel(
        backend, k,
        tensors(zeros(DType::F32, 0), make_tensor(DType::F32, std::vector<float>{7, 7, 7}),
                zeros(DType::F32, 3)));
    for (int64_t i = 0; i < 3; ++i) {
      EXPECT_EQ(f32_at(got[1], i), 0.5f) << backend;
      EXPECT_EQ(f32_at(got[2], i), -std::numeric_limits<float>::infinity()) << backend;
    }
  }
}

// Integer reductions are exact and identical on both backends (i64 sum wraps).
TEST(ReduceKernel, Int64SumAndArgMax) {
  const int64_t rows = 4, cols = 70;
  KernelBuilder b({rows, cols}, 1);
  const int x = b.arg(DType::I32, rows * cols), o1 = b.arg(DType::I64, rows, true),
            o2 = b.arg(DType::I64, rows, true);
  const int v = b.load(x, Affine({{0, cols}, {1, 1}}));
  const int s = b.reduce(ReduceKind::Sum, v), am = b.reduce(ReduceKind::ArgMax, v);
  b.post();
  b.store(o1, V(0), s);
  b.store(o2, V(0), am);
  const Kernel k = b.build();
  std::vector<int64_t> xs(rows * cols);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<int64_t>((i * 7919) % 1000) - 500;
  for (const char* backend : kBackends) {
    const auto got = run_kernel(
        backend, k,
        tensors(make_tensor(DType::I32, xs), zeros(DType::I64, rows), zeros(DType::I64, rows)));
    for (int64_t r = 0; r < rows; ++r) {
      int64_t sum = 0, best = 0;
      for (int64_t c = 0; c < cols; ++c) {
        sum += xs[r * cols + c];
        if (xs[r * cols + c] > xs[r * cols + best]) best = c;
      }
      EXPECT_EQ(load_element(DType::I64, got[1].data(), r).i64, sum) << backend;
      EXPECT_EQ(load_element(DType::I64, got[2].data(), r).i64, best) << backend;
    }
  }
}

}  // namespace
}  // namespace testing
}  // namespace ferrite
