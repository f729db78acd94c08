// The Highway f32 loops on their own: the vector formulas against the op manifest (which ops
// have one, and each within its accuracy contract of the reference on its domain), the
// accuracy of the vector Erf (our approximation, not Highway's) against double-precision
// erf, the reduction partials, and a benchmark of
// the portable backend against the reference (disabled: run with
// --gtest_also_run_disabled_tests --gtest_filter='*Bench*'; it asserts nothing).
#include "runtime/kernels/portable/simd_f32.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "compiler/plan/scalar_ops.h"
#include "runtime/kernels/portable/portable_backend.h"
#include "tests/unit/runtime/kernel_builder.h"

namespace ferrite {
namespace testing {
namespace {

double ulp_of(double x) {
  const float f = static_cast<float>(std::fabs(x));
  return std::nextafter(f, INFINITY) - f;
}

// n points spread over an op's domain (ops.h), its infinite ends cut at +-50 (+-1e4 for the
// ops that take any argument).
std::vector<float> domain_points(Op op, size_t n) {
  const OpInfo& info = op_info(op);
  const double cut = std::isinf(info.lo) && std::isinf(info.hi) ? 1e4 : 50;
  const double lo = std::max(info.lo, -cut), hi = std::min(info.hi, cut);
  std::vector<float> xs(n);
  for (size_t i = 0; i < n; ++i) {
    // open at a bound that is a pole or branch point (Log, Sqrt and Rsqrt at 0)
    const double t = (static_cast<double>(i) + 0.5) / static_cast<double>(n);
    xs[i] = static_cast<float>(lo + (hi - lo) * t);
  }
  return xs;
}

// Within the manifest's ulp of the reference: relative to the result, and absolute to 1 (to
// max(1, |x|) for Sin and Cos, whose argument reduction errs with |x|; for Pow, times
// 1 + |y log x|).
bool within_contract(Op op, double x, double y, float got, float want) {
  if (std::isnan(want) || std::isinf(want)) return std::isnan(want) ? std::isnan(got) : got == want;
  const double u = op_info(op).ulp;
  double scale = op == Op::Sin || op == Op::Cos ? std::max(1.0, std::fabs(x)) : 1.0;
  if (op == Op::Pow) scale *= 1 + std::fabs(y * std::log(x));
  return std::fabs(static_cast<double>(got) - want) <= u * (ulp_of(want) + 0x1p-23 * scale);
}

TEST(SimdF32, FormulasAreTheManifests) {
  for_each_simd_target([&] {
    const size_t n = 4096;  // a multiple of every vector width
    for (int o = 0; o < static_cast<int>(Op::kCount); ++o) {
      const Op op = static_cast<Op>(o);
      const bool unary =
          op_is_unary_math(op) && op != Op::Not && op != Op::IsNaN && op != Op::IsInf;
      if (!unary && !op_is_binary_arith(op)) continue;
      const std::vector<float> xs = domain_points(op, n);
      std::vector<float> ys(n), out(n);
      for (size_t i = 0; i < n; ++i) ys[i] = 0.5f + 3.5f * static_cast<float>(i % 97) / 97;
      const bool vector = unary ? simd::unary_f32(op, xs.data(), out.data(), n)
                                : simd::binary_f32(op, xs.data(), ys.data(), out.data(), n);
      EXPECT_EQ(vector, op_vector(op, op_vec::P))
          << op_name(op) << ": the manifest says " << (vector ? "no " : "") << "vector formula";
      int bad = 0;
      for (size_t i = 0; i < n; ++i) {
        const Scalar want =
            unary ? eval_unary(op, ScalarType::F32, scalar_f32(xs[i]))
                  : eval_binary(op, ScalarType::F32, scalar_f32(xs[i]), scalar_f32(ys[i]));
        if (!within_contract(op, xs[i], ys[i], out[i], want.f32) && bad++ < 3)
          ADD_FAILURE() << op_name(op) << "(" << xs[i]
                        << (unary ? std::string() : ", " + std::to_string(ys[i]))
                        << ") = " << out[i] << ", reference " << want.f32 << ", contract "
                        << op_info(op).ulp << " ulp";
      }
    }
  });
}

TEST(SimdF32, ErfWithinEightUlps) {
  for_each_simd_target([&] {
    const size_t n = 200000;  // a multiple of every vector width
    std::vector<float> xs(n), ys(n);
    for (size_t i = 0; i < n; ++i) xs[i] = -5.0f + 10.0f * static_cast<float>(i) / n;
    xs[1] = 1e-30f;
    xs[2] = -1e-6f;
    simd::unary_f32(Op::Erf, xs.data(), ys.data(), n);
    double worst = 0, worst_rel = 0;
    for (size_t i = 0; i < n; ++i) {
      const double want = std::erf(static_cast<double>(xs[i]));
      worst = std::max(worst, std::fabs(ys[i] - want) / ulp_of(want));
      worst_rel = std::max(worst_rel, std::fabs(ys[i] - want) / std::fabs(want));
    }
    // Measured: 5.5 ulp with FMA (AVX3), 6.7 ulp on WASM (no FMA: each step rounds).
    EXPECT_LE(worst, 8.0) << "max error in ulps";
    EXPECT_LE(worst_rel, 5e-7);
    std::printf("erf max error: %.2f ulp, %.2g relative\n", worst, worst_rel);
  });
}

TEST(SimdF32, ReducePartialsMatchSequentialSum) {
  for_each_simd_target([&] {
    for (size_t n : {0u, 1u, 5u, 16u, 33u, 256u}) {
      std::vector<float> xs(n), acc(simd::kAccLanes, 0.0f);
      double want = 0;
      float want_max = -INFINITY;
      for (size_t i = 0; i < n; ++i) {
        want += xs[i] = static_cast<float>(i % 7) - 2.5f;
        want_max = std::max(want_max, xs[i]);
      }
      simd::reduce_f32(ReduceKind::Sum, xs.data(), n, acc.data());
      EXPECT_EQ(simd::reduce_f32_finish(ReduceKind::Sum, acc.data()), want) << n;  // exact here
      std::vector<float> mx(simd::kAccLanes, -INFINITY);
      simd::reduce_f32(ReduceKind::Max, xs.data(), n, mx.data());
      EXPECT_EQ(simd::reduce_f32_finish(ReduceKind::Max, mx.data()), want_max) << n;
    }
  });
}

// Every kind through the partials, a NaN in any position propagating through Max and Min
// as in the reference.
TEST(SimdF32, ReduceFinishAllKindsAndNaN) {
  for_each_simd_target([&] {
    const ReduceKind kinds[] = {ReduceKind::Sum, ReduceKind::Prod, ReduceKind::Max,
                                ReduceKind::Min};
    for (size_t n : {1u, 7u, 40u, 100u}) {
      for (ReduceKind kind : kinds) {
        std::vector<float> xs(n);
        for (size_t i = 0; i < n; ++i) xs[i] = 1.0f + static_cast<float>((i * 5) % 9) / 64;
        const float id = reduce_identity(kind, ScalarType::F32).f32;
        double want = kind == ReduceKind::Prod ? 1 : kind == ReduceKind::Sum ? 0 : xs[0];
        for (float x : xs) {
          if (kind == ReduceKind::Sum) want += x;
          if (kind == ReduceKind::Prod) want *= x;
          if (kind == ReduceKind::Max) want = std::max<double>(want, x);
          if (kind == ReduceKind::Min) want = std::min<double>(want, x);
        }
        std::vector<float> acc(simd::kAccLanes, id);
        simd::reduce_f32(kind, xs.data(), n, acc.data());
        EXPECT_NEAR(simd::reduce_f32_finish(kind, acc.data()), want, 1e-5 * std::fabs(want))
            << reduce_name(kind) << " n=" << n;
        if (kind != ReduceKind::Max && kind != ReduceKind::Min) continue;
        for (size_t at : {size_t{0}, n / 2, n - 1}) {
          std::vector<float> ys = xs;
          ys[at] = NAN;
          std::fill(acc.begin(), acc.end(), id);
          simd::reduce_f32(kind, ys.data(), n, acc.data());
          EXPECT_TRUE(std::isnan(simd::reduce_f32_finish(kind, acc.data())))
              << reduce_name(kind) << " n=" << n << " NaN at " << at;
        }
      }
    }
  });
}

double seconds_per_run(PreparedKernel& k, std::vector<void*>& args) {
  k.run(args.data());  // warm up
  const int reps = 5;
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) k.run(args.data());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
}

// out = exp(a + b) over 1M floats, and a plain add, per backend.
TEST(PortableBench, DISABLED_AddExp1M) {
  const int64_t n = 1 << 20;
  for (bool with_exp : {true, false}) {
    KernelBuilder b({n});
    const int a = b.arg(DType::F32, n), c = b.arg(DType::F32, n), out = b.arg(DType::F32, n, true);
    int v = b.binary(Op::Add, b.load(a, V(0)), b.load(c, V(0)));
    if (with_exp) v = b.unary(Op::Exp, v);
    b.store(out, V(0), v);
    const Kernel k = b.build();
    Tensor ta(DType::F32, {n}), tc(DType::F32, {n}), to(DType::F32, {n});
    for (int64_t i = 0; i < n; ++i) ta.as<float>()[i] = static_cast<float>(i % 100) / 50 - 1;
    std::vector<void*> args = {ta.data(), tc.data(), to.data()};
    double t[2];
    int i = 0;
    for (const char* backend : {"reference", "portable"})
      t[i++] = seconds_per_run(*make_backend(backend)->prepare(k), args);
    std::printf("%s 1M f32 (%s): reference %.2f ms, portable %.3f ms, speedup %.0fx\n",
                with_exp ? "add+exp" : "add", portable_target_name(), t[0] * 1e3, t[1] * 1e3,
                t[0] / t[1]);
  }
}

// Row sums and column sums of a 1000 x 1000 matrix (lanes inner vs lanes outer).
TEST(PortableBench, DISABLED_Reductions1000x1000) {
  const int64_t n = 1000;
  Tensor x(DType::F32, {n * n}), out(DType::F32, {n});
  for (int64_t i = 0; i < n * n; ++i) x.as<float>()[i] = static_cast<float>(i % 17) / 17;
  std::vector<void*> args = {x.data(), out.data()};
  for (bool rows : {true, false}) {
    KernelBuilder b({n, n}, 1);
    const int xa = b.arg(DType::F32, n * n), oa = b.arg(DType::F32, n, true);
    const Index ix = rows ? Affine({{0, n}, {1, 1}}) : Affine({{1, n}, {0, 1}});
    const int s = b.reduce(ReduceKind::Sum, b.load(xa, ix));
    b.post();
    b.store(oa, V(0), s);
    const Kernel k = b.build();
    double t[2];
    int i = 0;
    for (const char* backend : {"reference", "portable"})
      t[i++] = seconds_per_run(*make_backend(backend)->prepare(k), args);
    std::printf("%s sums 1000x1000: reference %.2f ms, portable %.3f ms\n", rows ? "row" : "column",
                t[0] * 1e3, t[1] * 1e3);
  }
}

TEST(PortableBench, DISABLED_MatMul) {
  for (int64_t n : {64, 256, 512, 1024}) {
    std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
    ExternCall call;
    call.op = ExternOp::MatMul;
    TensorRef r;
    r.shape = {n, n};
    r.strides = {n, 1};
    call.inputs = {r, r};
    call.outputs = {r};
    ExternBuffer in[2] = {{a.data(), DType::F32, n * n}, {b.data(), DType::F32, n * n}};
    ExternBuffer o{c.data(), DType::F32, n * n};
    auto prepared = make_backend("portable")->prepare_extern(call);
    prepared->run(in, &o);
    const int reps = n >= 512 ? 3 : 20;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) prepared->run(in, &o);
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
    std::printf("matmul %lldx%lldx%lld (%s): %.3f ms, %.1f GFLOP/s\n", static_cast<long long>(n),
                static_cast<long long>(n), static_cast<long long>(n), portable_target_name(),
                s * 1e3, 2.0 * n * n * n / s * 1e-9);
  }
}

}  // namespace
}  // namespace testing
}  // namespace ferrite
