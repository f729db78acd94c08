// What the JIT kernel tests share: the ISAs this CPU runs, random inputs, and the check that
// the JIT computes what the reference interpreter does.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "jit/cpu_isa.h"
#include "jit/jit_backend.h"
#include "jit/kernel_analysis.h"
#include "tests/unit/runtime/kernel_builder.h"

namespace ferrite {
namespace jit_test {

inline std::vector<std::string> isas() {
  std::vector<std::string> out;
  if (jit::host_supports(jit::Isa::Avx2)) out.push_back("avx2");
  if (jit::host_supports(jit::Isa::Avx512)) out.push_back("avx512");
  return out;
}

inline Tensor random_tensor(DType dtype, int64_t n, uint32_t seed, double lo = -4, double hi = 4) {
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
// within `ulps`, bit for bit when it is 0; everything else exactly).
inline void expect_jit_matches(const Kernel& k, const std::vector<Tensor>& buffers,
                               double ulps = 4) {
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
      const int64_t failed = jit::jit_cache_stats().failed;
      jit::make_jit_backend(options)->prepare(k)->run(args.data());
      ASSERT_EQ(jit::jit_cache_stats().failed, failed) << "code generation failed (see the "
                                                          "dump: FERRITE_DUMP)\n"
                                                       << kernel_to_string(k);
      for (size_t a = 0; a < want.size(); ++a) {
        if (want[a].dtype() == DType::F32 && ulps > 0) {
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

}  // namespace jit_test
}  // namespace ferrite
