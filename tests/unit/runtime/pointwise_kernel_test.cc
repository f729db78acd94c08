// Pointwise kernels on the portable backend against the reference backend (the oracle),
// across block tails, broadcasts, strided and div/mod indices, masked loads and gathers.
#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "compiler/plan/error.h"
#include "tests/unit/runtime/kernel_builder.h"

namespace ferrite {
namespace testing {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

std::vector<float> uniform(int64_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

struct UnaryCase {
  Op op;
  float lo, hi;
  std::vector<float> specials;  // values outside the fast range, NaN, inf, ...
};

std::vector<UnaryCase> unary_cases() {
  const std::vector<float> common = {kNaN, kInf, -kInf, 0.0f, -0.0f};
  auto with = [&](std::vector<float> v) {
    v.insert(v.end(), common.begin(), common.end());
    return v;
  };
  return {
      {Op::Neg, -10, 10, with({})},
      {Op::Abs, -10, 10, with({})},
      {Op::Exp, -20, 20,
       with({100, -100, 88.5f, -87.5f, -95, -103.9f, -104.0f, -104.1f, -1e4f, -3.4e38f})},
      {Op::Log, 0.001f, 100, with({-1, 1e-40f, 3e38f})},
      {Op::Sqrt, 0, 100, with({-1})},
      {Op::Rsqrt, 0.01f, 100, with({-1})},
      {Op::Reciprocal, 0.01f, 100, with({-3})},
      {Op::Relu, -10, 10, with({})},
      {Op::Sigmoid, -12, 12, with({100, -100, -88})},
      {Op::Tanh, -10, 10, with({30, -30, 1e-6f})},
      {Op::Erf, -5, 5, with({1e-6f, -1e-7f, 10})},
      {Op::Floor, -100, 100, with({2.5f, -2.5f, 1e10f})},
      {Op::Ceil, -100, 100, with({2.5f, -2.5f, 1e10f})},
      {Op::Round, -100, 100, with({0.5f, 1.5f, 2.5f, -2.5f, -0.5f, 1e10f})},
      {Op::Sign, -10, 10, with({})},
      {Op::Sin, -10, 10, with({1e5f, -4e4f})},
      {Op::Cos, -10, 10, with({1e5f, -4e4f})},
      {Op::Tan, -1.5f, 1.5f, with({})},
      {Op::Asin, -1, 1, with({1.5f, -1})},
      {Op::Acos, -1, 1, with({1.5f, 1})},
      {Op::Atan, -10, 10, with({1e20f})},
      {Op::Sinh, -10, 10, with({100, -89})},
      {Op::Cosh, -10, 10, with({100, -89})},
      {Op::Asinh, -10, 10, with({1e20f})},
      {Op::Acosh, 1, 10, with({0.5f, 1e20f})},
      {Op::Atanh, -0.99f, 0.99f, with({1, -1, 2})},
  };
}

// out[i] = op(x[i]) over n points.
Kernel unary_kernel(Op op, int64_t n) {
  KernelBuilder b({n});
  const int x = b.arg(DType::F32, n), out = b.arg(DType::F32, n, true);
  b.store(out, V(0), b.unary(op, b.load(x, V(0))));
  return b.build();
}

TEST(PortableKernel, UnaryOpsMatchReference) {
  for_each_simd_target([&] {
    for (const UnaryCase& c : unary_cases()) {
      for (int64_t n : {1, 3, 17, 255, 257, 1000}) {
        std::vector<float> xs = uniform(n, c.lo, c.hi, static_cast<unsigned>(n));
        for (size_t i = 0; i < c.specials.size() && i < xs.size(); ++i)
          xs[(i * 7919) % xs.size()] = c.specials[i];
        const Kernel k = unary_kernel(c.op, n);
        const std::vector<Tensor> bufs = tensors(make_tensor(DType::F32, xs), zeros(DType::F32, n));
        const auto want = run_kernel("reference", k, bufs);
        const auto got = run_kernel("portable", k, bufs);
        expect_close(want[1], got[1], 4, 1e-6,
                     std::string(op_name(c.op)) + " n=" + std::to_string(n));
      }
    }
  });
}

TEST(PortableKernel, IsNaNIsInf) {
  for_each_simd_target([&] {
    const std::vector<float> xs = {1, kNaN, kInf, -kInf, 0, -3, kNaN, 5, 6, 7, 8, 9, kInf};
    const int64_t n = static_cast<int64_t>(xs.size());
    for (Op op : {Op::IsNaN, Op::IsInf}) {
      KernelBuilder b({n});
      const int x = b.arg(DType::F32, n), out = b.arg(DType::Bool, n, true);
      b.store(out, V(0), b.unary(op, b.load(x, V(0))));
      const Kernel k = b.build();
      const auto got =
          run_kernel("portable", k, tensors(make_tensor(DType::F32, xs), zeros(DType::Bool, n)));
      for (int64_t i = 0; i < n; ++i) {
        const bool want = op == Op::IsNaN ? std::isnan(xs[i]) : std::isinf(xs[i]);
        EXPECT_EQ(got[1].data()[i], want ? 1 : 0) << op_name(op) << " " << i;
      }
    }
  });
}

// out[i, j] = op(a[i, j], b[j]) and op(b[j], c[i]): row and column broadcasts (stride 0).
TEST(PortableKernel, BinaryOpsWithBroadcasts) {
  for_each_simd_target([&] {
    const Op ops[] = {Op::Add, Op::Sub,  Op::Mul, Op::Div, Op::Pow, Op::Max, Op::Min,
                      Op::Mod, Op::FMod, Op::Eq,  Op::Lt,  Op::Le,  Op::Gt,  Op::Ge};
    for (Op op : ops) {
      for (int64_t cols : {1, 3, 17, 257}) {
        const int64_t rows = 5;
        KernelBuilder b({rows, cols});
        const int a = b.arg(DType::F32, rows * cols), r = b.arg(DType::F32, cols);
        const int c = b.arg(DType::F32, rows);
        const bool cmp = op_is_compare(op);
        const DType odt = cmp ? DType::Bool : DType::F32;
        const int o1 = b.arg(odt, rows * cols, true), o2 = b.arg(odt, rows * cols, true);
        const Index out_ix = Affine({{0, cols}, {1, 1}});
        const int va = b.load(a, out_ix), vr = b.load(r, V(1)), vc = b.load(c, V(0));
        b.store(o1, out_ix, b.binary(op, va, vr));
        b.store(o2, out_ix, b.binary(op, vr, vc));
        const Kernel k = b.build();
        std::vector<float> av = uniform(rows * cols, 0.1f, 4, 1), rv = uniform(cols, -3, 3, 2);
        std::vector<float> cv = uniform(rows, 0.5f, 2, 3);
        av[0] = kNaN;
        if (cols > 1) rv[1] = av[1];  // equal operands for the compares
        const std::vector<Tensor> bufs =
            tensors(make_tensor(DType::F32, av), make_tensor(DType::F32, rv),
                    make_tensor(DType::F32, cv), zeros(odt, rows * cols), zeros(odt, rows * cols));
        const auto want = run_kernel("reference", k, bufs);
        const auto got = run_kernel("portable", k, bufs);
        const std::string what = std::string(op_name(op)) + " cols=" + std::to_string(cols);
        if (cmp) {
          expect_same_bytes(want[3], got[3], what);
          expect_same_bytes(want[4], got[4], what);
        } else {
          expect_close(want[3], got[3], 0, 0, what);  // exact: same scalar definition or IEEE op
          expect_close(want[4], got[4], 0, 0, what);
        }
      }
    }
  });
}

// out[i, j] = a[j, i] (transposed: stride `rows` along the lanes) + s (a scalar constant).
TEST(PortableKernel, TransposedLoadAndConstant) {
  const int64_t rows = 37, cols = 300;
  KernelBuilder b({rows, cols});
  const int a = b.arg(DType::F32, rows * cols), out = b.arg(DType::F32, rows * cols, true);
  const int v = b.load(a, Affine({{1, rows}, {0, 1}}));
  b.store(out, Affine({{0, cols}, {1, 1}}), b.binary(Op::Add, v, b.constant(ScalarType::F32, 0.5)));
  const Kernel k = b.build();
  const std::vector<float> av = uniform(rows * cols, -1, 1, 9);
  const auto got = run_kernel("portable", k,
                              tensors(make_tensor(DType::F32, av), zeros(DType::F32, rows * cols)));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      ASSERT_EQ(f32_at(got[1], i * cols + j), av[j * rows + i] + 0.5f) << i << "," << j;
}

// A reshape-like view: out[i] = a[(i // 3) * 5 + i % 3] (non-affine, per-lane indices).
TEST(PortableKernel, DivModIndex) {
  for (int64_t n : {3, 255, 300}) {
    const int64_t src = (n / 3 + 1) * 5;
    KernelBuilder b({n});
    const int a = b.arg(DType::F32, src), out = b.arg(DType::F32, n, true);
    b.store(out, V(0), b.load(a, Add(Mul(Div(V(0), C(3)), C(5)), Mod(V(0), C(3)))));
    const Kernel k = b.build();
    const std::vector<float> av = uniform(src, -1, 1, 4);
    const std::vector<Tensor> bufs = tensors(make_tensor(DType::F32, av), zeros(DType::F32, n));
    const auto got = run_kernel("portable", k, bufs);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(f32_at(got[1], i), av[(i / 3) * 5 + i % 3]) << i;
    expect_same_bytes(run_kernel("reference", k, bufs)[1], got[1], "divmod");
  }
}

// Concat along the lanes: out[i] = i < n1 ? a[i] : b[i - n1]; each load is masked so that
// it never touches its buffer outside its part (b[i - n1] is out of range for i < n1).
TEST(PortableKernel, MaskedLoadsConcat) {
  for_each_simd_target([&] {
    for (int64_t n1 : {1, 100, 256}) {
      const int64_t n2 = 157, n = n1 + n2;
      KernelBuilder b({n});
      const int a = b.arg(DType::F32, n1), bb = b.arg(DType::F32, n2),
                out = b.arg(DType::F32, n, true);
      const int i = b.loop_var(0);
      const int in_a = b.binary(Op::Lt, i, b.constant(ScalarType::I64, static_cast<double>(n1)));
      const int va = b.load(a, V(0), in_a);
      const int vb = b.load(bb, Add(V(0), C(-n1)), b.unary(Op::Not, in_a));
      b.store(out, V(0), b.where(in_a, va, vb));
      const Kernel k = b.build();
      const std::vector<float> av = uniform(n1, 0, 1, 5), bv = uniform(n2, 2, 3, 6);
      const auto got = run_kernel(
          "portable", k,
          tensors(make_tensor(DType::F32, av), make_tensor(DType::F32, bv), zeros(DType::F32, n)));
      for (int64_t j = 0; j < n; ++j)
        ASSERT_EQ(f32_at(got[2], j), j < n1 ? av[j] : bv[j - n1]) << j;
    }
  });
}

// Gather rows: out[i, j] = data[check(idx[i], rows), j].
Kernel gather_kernel(int64_t nidx, int64_t rows, int64_t cols) {
  KernelBuilder b({nidx, cols});
  const int data = b.arg(DType::F32, rows * cols), idx = b.arg(DType::I64, nidx);
  const int out = b.arg(DType::F32, nidx * cols, true);
  const int row = b.check_index(b.load(idx, V(0)), rows, "Gather 'g': indices");
  const int v = b.load(data, Add(Mul(ix_value(row), C(cols)), V(1)));
  b.store(out, Affine({{0, cols}, {1, 1}}), v);
  return b.build();
}

TEST(PortableKernel, GatherThroughCheckIndex) {
  const int64_t rows = 5, cols = 19;
  const std::vector<float> data = uniform(rows * cols, -1, 1, 7);
  const std::vector<int64_t> idx = {0, 4, -1, -5, 2, 3};
  const int64_t nidx = static_cast<int64_t>(idx.size());
  const Kernel k = gather_kernel(nidx, rows, cols);
  for (const char* backend : {"reference", "portable"}) {
    const auto got = run_kernel(backend, k,
                                tensors(make_tensor(DType::F32, data), make_tensor(DType::I64, idx),
                                        zeros(DType::F32, nidx * cols)));
    for (int64_t i = 0; i < nidx; ++i) {
      const int64_t r = idx[i] < 0 ? idx[i] + rows : idx[i];
      for (int64_t j = 0; j < cols; ++j)
        ASSERT_EQ(f32_at(got[2], i * cols + j), data[r * cols + j]) << backend << " " << i;
    }
  }
}

TEST(PortableKernel, GatherOutOfRangeThrowsWithMessage) {
  const int64_t rows = 5, cols = 4;
  const Kernel k = gather_kernel(3, rows, cols);
  for (int64_t bad : {5, -6, 1000}) {
    for (const char* backend : {"reference", "portable"}) {
      try {
        run_kernel(backend, k,
                   tensors(zeros(DType::F32, rows * cols),
                           make_tensor(DType::I64, std::vector<int64_t>{1, bad, 0}),
                           zeros(DType::F32, 3 * cols)));
        ADD_FAILURE() << backend << " did not throw for index " << bad;
      } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()),
                  "Gather 'g': indices: index " + std::to_string(bad) + " out of range [-5, 5)")
            << backend;
      }
    }
  }
}

// 1-D gather: the indirect index varies along the lanes (per-lane path), masked lanes
// (idx < 0 here) are not checked.
TEST(PortableKernel, LaneGatherWithMaskedCheck) {
  const int64_t n = 300, src = 50;
  KernelBuilder b({n});
  const int data = b.arg(DType::F32, src), idx = b.arg(DType::I64, n),
            out = b.arg(DType::F32, n, true);
  const int iv = b.load(idx, V(0));
  const int ok = b.binary(Op::Ge, iv, b.constant(ScalarType::I64, 0));
  const int r = b.check_index(iv, src, "Gather 'h': indices", ok);
  b.store(out, V(0), b.load(data, ix_value(r), ok));
  const Kernel k = b.build();
  std::vector<int64_t> iv_data(n);
  for (int64_t i = 0; i < n; ++i) iv_data[i] = i % 7 == 0 ? -1000 : (i * 13) % src;
  const std::vector<float> dv = uniform(src, -1, 1, 8);
  const std::vector<Tensor> bufs =
      tensors(make_tensor(DType::F32, dv), make_tensor(DType::I64, iv_data), zeros(DType::F32, n));
  const auto got = run_kernel("portable", k, bufs);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(f32_at(got[2], i), iv_data[i] < 0 ? 0.0f : dv[iv_data[i]]) << i;
  expect_same_bytes(run_kernel("reference", k, bufs)[2], got[2], "lane gather");
}

TEST(PortableKernel, OutOfBoundsAffineAccessThrows) {
  KernelBuilder b({10});
  const int a = b.arg(DType::F32, 10), out = b.arg(DType::F32, 10, true);
  b.store(out, V(0), b.load(a, Add(V(0), C(1))));  // reads a[10] at the last point
  const Kernel k = b.build();
  for (const char* backend : {"reference", "portable"})
    EXPECT_THROW(run_kernel(backend, k, tensors(zeros(DType::F32, 10), zeros(DType::F32, 10))),
                 Error)
        << backend;
}

// A 4-D NCHW-style kernel (collapsed to one row by the portable backend) and a kernel with
// a zero-size range (no iterations, nothing written).
TEST(PortableKernel, CollapsedDimsAndEmptyRanges) {
  const int64_t n = 2 * 3 * 5 * 7;
  KernelBuilder b({2, 3, 5, 7});
  const int x = b.arg(DType::F32, n), bias = b.arg(DType::F32, 3), out = b.arg(DType::F32, n, true);
  const Index flat = Affine({{0, 105}, {1, 35}, {2, 7}, {3, 1}});
  b.store(out, flat, b.binary(Op::Add, b.load(x, flat), b.load(bias, V(1))));
  const Kernel k = b.build();
  const std::vector<float> xv = uniform(n, -1, 1, 10), bv = {10, 20, 30};
  const auto got = run_kernel(
      "portable", k,
      tensors(make_tensor(DType::F32, xv), make_tensor(DType::F32, bv), zeros(DType::F32, n)));
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(f32_at(got[2], i), xv[i] + bv[(i / 35) % 3]) << i;

  KernelBuilder e({4, 0});
  const int ex = e.arg(DType::F32, 0), eo = e.arg(DType::F32, 0, true);
  e.store(eo, V(1), e.load(ex, Add(V(1), C(100))));  // would be out of range if it ran
  const Kernel ek = e.build();
  for (const char* backend : {"reference", "portable"})
    EXPECT_NO_THROW(run_kernel(backend, ek, tensors(zeros(DType::F32, 0), zeros(DType::F32, 0))));
}

}  // namespace
}  // namespace testing
}  // namespace ferrite
