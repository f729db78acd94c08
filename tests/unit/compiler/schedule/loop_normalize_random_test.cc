// Loop normalisation keeps a kernel's meaning: over hundreds of random kernels (random_kernels.h)
// every step, and the whole pass, leaves bit-identical args on the reference interpreter (so
// reductions accumulate in the same order), and the portable backend runs the normalised
// pointwise kernels to the same bits as the reference runs the originals.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>

#include "compiler/plan/loop_dims.h"
#include "compiler/schedule/loop_normalize.h"
#include "runtime/backend.h"
#include "tests/unit/compiler/schedule/random_kernels.h"

namespace ferrite {
namespace {

using loopnorm_test::Bytes;
using loopnorm_test::RandomKernels;
using loopnorm_test::run_reference;

void expect_same_run(const Kernel& before, const Kernel& after, const Bytes& in,
                     const std::string& step) {
  std::string want_error, got_error;
  const Bytes want = run_reference(before, in, &want_error);
  const Bytes got = run_reference(after, in, &got_error);
  const std::string listing =
      "\nbefore:\n" + kernel_to_string(before) + "after " + step + ":\n" + kernel_to_string(after);
  ASSERT_EQ(want_error, got_error) << listing;
  for (size_t a = 0; a < want.size(); ++a) EXPECT_TRUE(want[a] == got[a]) << "arg " << a << listing;
}

bool has_reduce(const Kernel& k) {
  return k.num_reduce > 0;
}

void expect_portable_matches(const Kernel& original, const Kernel& normalized, const Bytes& in) {
  std::string error;
  const Bytes want = run_reference(original, in, &error);
  ASSERT_EQ(error, "");
  Bytes got = in;
  std::vector<void*> args;
  for (auto& b : got) args.push_back(b.data());
  make_backend("portable")->prepare(normalized)->run(args.data());
  for (size_t a = 0; a < want.size(); ++a)
    EXPECT_TRUE(want[a] == got[a]) << "arg " << a << "\n" << kernel_to_string(normalized);
}

TEST(LoopNormalizeRandom, EveryStepKeepsTheResults) {
  RandomKernels gen(20261121);
  const int kKernels = 1500;
  std::map<std::string, int> changed;
  for (int i = 0; i < kKernels && !::testing::Test::HasFailure(); ++i) {
    const Kernel k = gen.make();
    const Bytes in = gen.inputs(k);
    const std::string original = kernel_to_string(k);
    // Counts a change against `base`, checks against the original kernel.
    auto check = [&](const std::string& step, const Kernel& after, const std::string& base) {
      SCOPED_TRACE("kernel " + std::to_string(i) + ", " + step);
      if (kernel_to_string(after) != base) ++changed[step];
      expect_same_run(k, after, in, step);
    };
    check("merge", merge_loop_dims(k), original);
    check("split", split_divmod_dims(k), original);
    check("reorder", reorder_outer_dims(k), original);
    const Kernel n = normalize_loops(k);
    check("normalize", n, original);
    for (int64_t tile : {2, 3}) {
      LoopNormalizeOptions options;
      options.transpose_tile = tile;
      options.transpose_min_bytes = options.transpose_min_row = 0;
      check("tile", normalize_loops(k, options), kernel_to_string(n));
    }
    // What the portable backend does again at prepare time is a no-op by now.
    EXPECT_EQ(kernel_to_string(merge_loop_dims(n)), kernel_to_string(n));
    std::string error;
    if (!has_reduce(k) && (run_reference(k, in, &error), error.empty()))
      expect_portable_matches(k, n, in);
  }
  // The generator reaches every step: each changes a good share of the kernels.
  for (const char* step : {"merge", "split", "reorder", "normalize", "tile"})
    EXPECT_GE(changed[step], kKernels / 25) << step;
  for (const auto& [step, n] : changed)
    std::printf("%s changed %d of %d kernels\n", step.c_str(), n, kKernels);
}

}  // namespace
}  // namespace ferrite
