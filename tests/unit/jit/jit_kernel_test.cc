// The JIT backend against the reference interpreter on hand-built kernels, one per shape
// of loop nest and kind of access the code generator has, for every ISA this CPU runs.
// Each kernel must be compiled (not left to the portable backend).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "jit/cpu_isa.h"
#include "jit/jit_backend.h"
#include "tests/unit/runtime/kernel_builder.h"

namespace ferrite {
namespace {

using testing::Affine;
using testing::C;
using testing::KernelBuilder;
using testing::V;

std::vector<std::string> isas() {
  std::vector<std::string> out;
  if (jit::host_supports(jit::Isa::Avx2)) out.push_back("avx2");
  if (jit::host_supports(jit::Isa::Avx512)) out.push_back("avx512");
  return out;
}

Tensor random_tensor(DType dtype, int64_t n, uint32_t seed, double lo = -4, double hi = 4) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  Tensor t(dtype, {n});
  for (int64_t i = 0; i < n; ++i) {
    const double v = u(rng);
    if (dtype == DType::F32 || dtype == DType::F16) {
      store_element(dtype, t.data(), i, ScalarType::F32, scalar_f32(static_cast<float>(v)));
    } else if (dtype == DType::Bool) {
      store_element(dtype, t.data(), i, ScalarType::Bool, scalar_bool(v > 0));
    } else {
      store_element(dtype, t.data(), i, ScalarType::I64, scalar_i64(static_cast<int64_t>(v)));
    }
  }
  return t;
}

// Runs k on the reference and on the JIT under each ISA; every arg must match (floats
// within `ulps`, everything else exactly).
void expect_jit_matches(const Kernel& k, const std::vector<Tensor>& buffers, double ulps = 4) {
  const std::vector<Tensor> want = testing::run_kernel("reference", k, buffers);
  for (const std::string& isa : isas()) {
    SCOPED_TRACE("isa " + isa);
    ASSERT_EQ(jit::jit_refusal(k, isa), "") << kernel_to_string(k);
    for (int threads : {1, 2}) {
      BackendOptions options;
      options.isa = isa;
      options.threads = threads;
      std::vector<Tensor> got;
      std::vector<void*> args;
      for (const Tensor& t : buffers) got.push_back(testing::copy_of(t));
      for (Tensor& t : got) args.push_back(t.data());
      jit::make_jit_backend(options)->prepare(k)->run(args.data());
      for (size_t a = 0; a < want.size(); ++a) {
        if (want[a].dtype() == DType::F32) {
          testing::expect_close(want[a], got[a], ulps, 1e-6, "arg " + std::to_string(a));
        } else {
          ASSERT_EQ(0, std::memcmp(want[a].data(), got[a].data(), want[a].nbytes()))
              << "arg " << a << "\n"
              << kernel_to_string(k);
        }
      }
    }
  }
}

TEST(JitKernel, PointwiseWithTailsAndBroadcast) {
  for (int64_t n : {1, 7, 16, 17, 33, 100}) {
    KernelBuilder b({3, n});
    const int x = b.arg(DType::F32, 3 * n), bias = b.arg(DType::F32, n), s = b.arg(DType::F32, 3),
              y = b.arg(DType::F32, 3 * n, true);
    const int v = b.load(x, Affine({{0, n}, {1, 1}}));
    const int w = b.load(bias, V(1));
    const int r = b.load(s, V(0));
    const int t = b.binary(Op::Mul, b.binary(Op::Add, v, w), r);
    b.store(y, Affine({{0, n}, {1, 1}}), b.unary(Op::Relu, t));
    expect_jit_matches(
        b.build(),
        testing::tensors(random_tensor(DType::F32, 3 * n, 1), random_tensor(DType::F32, n, 2),
                         random_tensor(DType::F32, 3, 3), testing::zeros(DType::F32, 3 * n)));
  }
}

TEST(JitKernel, ArgMaxRowsThenCompare) {
  // Hardmax: argmax over each row, then one-hot in a second inner loop.
  KernelBuilder b({4, 4}, 1);
  const int x = b.arg(DType::F32, 16), y = b.arg(DType::F32, 16, true);
  const int am = b.reduce(ReduceKind::ArgMax, b.load(x, Affine({{0, 4}, {1, 1}})));
  b.end_loop();
  const int eq = b.binary(Op::Eq, am, b.loop_var(1));
  b.store(y, Affine({{0, 4}, {1, 1}}), b.cast(ScalarType::F32, eq));
  b.post();
  expect_jit_matches(b.build(), testing::tensors(random_tensor(DType::F32, 16, 4),
                                                 testing::zeros(DType::F32, 16)));
}

}  // namespace
}  // namespace ferrite
