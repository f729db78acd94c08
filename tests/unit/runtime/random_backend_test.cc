// Differential test of the vector backends against the reference: thousands of random
// kernels (random_ops_kernels.h) per backend, each run on both; every output element must
// agree within the tolerance its kernel carries (random_ops_bounds.h: |got - want| <=
// 2 (A + R |want|) + FLT_MIN per output, from a forward error bound propagated op by op;
// integers, bools and exact floats bit for bit, NaN = NaN, infinities exactly), and a kernel
// that fails (an out-of-range gather index) must fail on both with the same message.
// Kernel i comes from seed kSeed + i; FERRITE_RANDOM_SEED=s runs only seed s and prints it,
// FERRITE_RANDOM_KERNELS=n runs n kernels per test; FERRITE_DUMP=dir passes dir to the backend
// (the JIT writes each kernel's code there).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "runtime/backend.h"
#ifdef FERRITE_HAS_JIT
#include "jit/jit_backend.h"
#endif
#include "runtime/kernels/portable/simd_f32.h"
#include "tests/unit/runtime/random_ops_check.h"
#include "tests/unit/support/slow_build.h"

namespace ferrite {
namespace {

using random_ops::Bytes;
using random_ops::Case;
using random_ops::Coverage;
using random_ops::RandomOpsKernels;

constexpr int kKernels = test::cases_for_build(3000);  // per backend
constexpr int kThreadKernels = 300;                    // threads=1 against threads=2
constexpr int kGeneratorKernels = 1000;
constexpr uint32_t kSeed = 0x5eed0000;
constexpr int kMaxReported = 3;

// A backend under test. The JIT has one entry per instruction set; an entry is skipped while
// its backend is not registered or when this CPU lacks the instruction set. The portable
// backend also runs with its Highway dispatch pinned to narrower targets (SSE4 has the
// 4 lanes of WASM SIMD and NEON).
struct Variant {
  const char* label;
  const char* backend;
  BackendOptions options;
  const char* simd_target = "";  // portable: the Highway target to pin ("": the best)
};

// gtest prints a parameter in failure messages and test lists: the label, not its bytes.
void PrintTo(const Variant& v, std::ostream* os) {
  *os << v.label;
}

const Variant kVariants[] = {
    {"portable", "portable", BackendOptions{}},
    {"portable-avx2", "portable", BackendOptions{}, "AVX2"},
    {"portable-sse4", "portable", BackendOptions{}, "SSE4"},
    {"jit-avx512", "jit", BackendOptions{"avx512", 1, "", false, nullptr}},
    {"jit-avx2", "jit", BackendOptions{"avx2", 1, "", false, nullptr}},
};

// Pins the portable backend's Highway dispatch while it lives.
class PinnedTarget {
 public:
  explicit PinnedTarget(const std::string& target) : pinned_(!target.empty()) {
    if (pinned_) simd::pin_target(target);
  }
  ~PinnedTarget() {
    if (pinned_) simd::pin_target("");
  }

 private:
  bool pinned_;
};

std::unique_ptr<KernelBackend> make_variant(const Variant& v, int threads, std::string* skip) {
#ifdef FERRITE_HAS_JIT
  jit::register_jit_backend();
#endif
  const std::vector<std::string> names = backend_names();
  if (std::find(names.begin(), names.end(), v.backend) == names.end()) {
    *skip = std::string("backend '") + v.backend + "' is not registered in this build";
    return nullptr;
  }
  const std::vector<std::string> targets = simd::available_targets();
  if (*v.simd_target && std::find(targets.begin(), targets.end(), v.simd_target) == targets.end()) {
    *skip = std::string("Highway target ") + v.simd_target + " is not available here";
    return nullptr;
  }
  BackendOptions options = v.options;
  options.threads = threads;
  if (const char* dump = std::getenv("FERRITE_DUMP")) options.dump_dir = dump;  // debugging
  try {
    return make_backend(v.backend, options);
  } catch (const std::exception& e) {  // e.g. the CPU lacks the instruction set
    *skip = std::string(v.label) + ": " + e.what();
    return nullptr;
  }
}

// The seeds a test runs: n from kSeed (FERRITE_RANDOM_KERNELS=n for a longer soak), or the
// one FERRITE_RANDOM_SEED names.
std::vector<uint32_t> seeds(int n) {
  if (const char* s = std::getenv("FERRITE_RANDOM_SEED"))
    return {static_cast<uint32_t>(std::strtoul(s, nullptr, 0))};
  if (const char* s = std::getenv("FERRITE_RANDOM_KERNELS")) n = std::atoi(s);
  std::vector<uint32_t> v;
  for (int i = 0; i < n; ++i) v.push_back(kSeed + static_cast<uint32_t>(i));
  return v;
}

// Kernel of `seed`, or a failure naming it (a generator bug).
bool make_case(uint32_t seed, Case* c, Bytes* in) {
  try {
    RandomOpsKernels gen(seed);
    *c = gen.make();
    *in = gen.inputs(*c);
    if (std::getenv("FERRITE_RANDOM_SEED")) std::printf("%s", kernel_to_string(c->k).c_str());
    return true;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "seed " << seed << ": generator bug: " << e.what();
    return false;
  }
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The JIT runs a kernel it refuses on the portable backend, which would pass this test
// untested: count the refusals by reason (numbers in it replaced by #).
void count_refusal(const Variant& v, const Kernel& k, std::map<std::string, int>* refusals) {
#ifdef FERRITE_HAS_JIT
  if (std::string(v.backend) != "jit") return;
  std::string why = jit::jit_refusal(k, v.options.isa);
  if (why.empty()) return;
  // Numbers (value ids, arg numbers, sizes) and the kernel's name vary; the rest is the reason.
  std::string reason;
  for (char ch : why) {
    if (std::isdigit(static_cast<unsigned char>(ch))) {
      if (reason.empty() || reason.back() != '#') reason += '#';
    } else {
      reason += ch;
    }
  }
  ++(*refusals)[reason];
#else
  (void)v, (void)k, (void)refusals;
#endif
}

// At least kMinJitShare of the random kernels must be compiled, not counting those with an
// op the JIT leaves to the portable backend by design ("Sin: op Sin on F32": the
// trigonometric and hyperbolic functions, remainders), which say nothing about its coverage.
constexpr double kMinJitShare = 0.45;

void check_jit_share(int kernels, const std::map<std::string, int>& refusals) {
  int refused = 0, by_design = 0;
  for (const auto& r : refusals) {
    refused += r.second;
    if (r.first.find(": op ") != std::string::npos) by_design += r.second;
  }
  std::printf("  jit: %d of %d kernels compiled (%d have an op it leaves to portable)\n",
              kernels - refused, kernels, by_design);
  for (const auto& r : refusals) std::printf("    %5d refused: %s\n", r.second, r.first.c_str());
  if (kernels >= 1000) {  // not for one seed (FERRITE_RANDOM_SEED)
    EXPECT_GE(kernels - refused, kMinJitShare * (kernels - by_design))
        << "the JIT refuses too many kernels";
  }
}

class RandomBackendTest : public ::testing::TestWithParam<Variant> {};

TEST_P(RandomBackendTest, MatchesReference) {
  const Variant& v = GetParam();
  std::string skip;
  const std::unique_ptr<KernelBackend> backend = make_variant(v, 1, &skip);
  if (!backend) GTEST_SKIP() << skip;
  const PinnedTarget pinned(v.simd_target);
  Coverage coverage;
  std::map<std::string, int> refusals;  // JIT: why kernels fell back to portable, and how often
  int failures = 0;
  const auto start = std::chrono::steady_clock::now();
#ifdef FERRITE_HAS_JIT
  // A kernel the JIT accepts and then fails to generate runs on the portable backend, right
  // but untested: a code generator bug.
  const int64_t codegen_failures = jit::jit_cache_stats().failed;
#endif
  for (uint32_t seed : seeds(kKernels)) {
    Case c;
    Bytes in;
    if (!make_case(seed, &c, &in) && ++failures >= kMaxReported) break;
    if (c.k.code.empty()) continue;
    count_refusal(v, c.k, &refusals);
    std::string ref_error;
    const std::string diff = run_and_compare(*backend, c, in, &ref_error, &coverage.usage);
    coverage.add(c, ref_error);
    if (diff.empty()) continue;
    ADD_FAILURE() << v.label << ": kernel " << seed - kSeed << " (seed " << seed << ", "
                  << c.pattern << "): " << diff << "\n"
                  << kernel_to_string(c.k);
    if (++failures >= kMaxReported) break;
  }
  std::printf("[%s] %.2f s for %s", v.label, seconds_since(start), coverage.str().c_str());
  if (std::string(v.backend) == "jit") check_jit_share(coverage.kernels, refusals);
#ifdef FERRITE_HAS_JIT
  EXPECT_EQ(jit::jit_cache_stats().failed, codegen_failures)
      << "the JIT accepted kernels whose code generation then failed";
#endif
}

// The threads a backend may use change nothing, not even the order of a sum.
TEST_P(RandomBackendTest, ThreadsDoNotChangeResults) {
  const Variant& v = GetParam();
  std::string skip;
  const std::unique_ptr<KernelBackend> one = make_variant(v, 1, &skip);
  const std::unique_ptr<KernelBackend> two = make_variant(v, 2, &skip);
  if (!one || !two) GTEST_SKIP() << skip;
  const PinnedTarget pinned(v.simd_target);
  int failures = 0;
  for (uint32_t seed : seeds(kThreadKernels)) {
    Case c;
    Bytes in;
    if (!make_case(seed, &c, &in)) break;
    std::string error_one, error_two;
    const Bytes a = random_ops::run_backend(*one, c.k, in, &error_one);
    const Bytes b = random_ops::run_backend(*two, c.k, in, &error_two);
    bool same = error_one == error_two;
    for (size_t i = 0; same && error_one.empty() && i < a.size(); ++i) same = a[i] == b[i];
    if (same) continue;
    ADD_FAILURE() << v.label << ": seed " << seed << ": threads=1 and threads=2 differ (errors \""
                  << error_one << "\", \"" << error_two << "\")\n"
                  << kernel_to_string(c.k);
    if (++failures >= kMaxReported) break;
  }
}

std::string variant_name(const ::testing::TestParamInfo<Variant>& info) {
  std::string name = info.param.label;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Backends, RandomBackendTest, ::testing::ValuesIn(kVariants), variant_name);

// The generator reaches what the backends must be tested on, and the reference runs every
// kernel (failing only on a planned out-of-range index, with the kernel's message).
TEST(RandomOpsKernels, ReachEveryFeature) {
  Coverage coverage;
  for (uint32_t seed : seeds(kGeneratorKernels)) {
    Case c;
    Bytes in;
    if (!make_case(seed, &c, &in)) return;
    std::string error;
    random_ops::run_reference(c.k, in, &error);
    if (!error.empty()) {
      ASSERT_TRUE(c.error_planned && error.rfind("gather ", 0) == 0)
          << "seed " << seed << ": " << error << "\n"
          << kernel_to_string(c.k);
    }
    coverage.add(c, error);
  }
  if (std::getenv("FERRITE_RANDOM_SEED") || std::getenv("FERRITE_RANDOM_KERNELS")) return;
  const int few = kGeneratorKernels / 200;
  // Every op of the Kernel contract (ops.h): a new op fails here until the generator draws it.
  for (int i = 0; i < static_cast<int>(Op::kCount); ++i) {
    const char* op = op_name(static_cast<Op>(i));
    EXPECT_GE(coverage.ops[op], few) << op;
  }
  for (const char* kind : {"sum f32", "max f32", "min f32", "prod f32", "argmax f32", "argmin f32",
                           "sum i64", "max i64", "min i64"})
    EXPECT_GE(coverage.reduce_kinds[kind], few) << kind;
  for (const char* dtype : {"float32", "float16", "int64", "int32", "uint8", "bool"})
    EXPECT_GE(coverage.stores[dtype], few) << dtype;
  for (const char* pattern : {"pointwise", "reduce", "softmax", "layernorm", "chain"})
    EXPECT_GE(coverage.patterns[pattern], few) << pattern;
  EXPECT_GE(coverage.tails, kGeneratorKernels / 2);
  EXPECT_GE(coverage.strided_reductions, few);
  EXPECT_GE(coverage.lane_gathers, few);
  EXPECT_GE(coverage.row_gathers, few);
  EXPECT_GE(coverage.errors_raised, few);
  EXPECT_GE(coverage.padded, few);
  EXPECT_GE(coverage.special, few);
  EXPECT_GE(coverage.f64, few);
  std::printf("generator: %s", coverage.str().c_str());
}

// The tolerance rule on single elements.
TEST(RandomOpsKernels, CheckElement) {
  using random_ops::check_element;
  random_ops::Val inexact = random_ops::exact_val(ScalarType::F32, -10, 10);
  inexact.exact = false;
  inexact.R = 1e-6;
  const random_ops::Val exact = random_ops::exact_val(ScalarType::F32, -10, 10);
  auto f32 = [](float x) { return std::vector<float>{x}; };
  auto check = [&](const random_ops::Val& v, float want, float got) {
    return check_element(DType::F32, v, f32(want).data(), f32(got).data(), 0);
  };
  EXPECT_EQ(check(inexact, 1.0f, 1.0000019f), "");
  EXPECT_NE(check(inexact, 1.0f, 1.00001f), "");
  EXPECT_EQ(check(exact, 0.0f, -0.0f), "");
  EXPECT_NE(check(exact, 1.0f, 1.0000001f), "");
  EXPECT_EQ(check(inexact, NAN, NAN), "");
  EXPECT_NE(check(inexact, NAN, 1.0f), "");
  EXPECT_NE(check(inexact, INFINITY, 3e38f), "");
  EXPECT_NE(check(inexact, 1.0f, NAN), "");
  const std::vector<int64_t> i = {5}, j = {6};
  EXPECT_NE(check_element(DType::I64, exact, i.data(), j.data(), 0), "");
}

// run_backend sees a backend write past the end of an arg (as a full-vector tail store would).
TEST(RandomOpsKernels, GuardsCatchWritesPastAnArg) {
  class PastTheEnd : public KernelBackend, public PreparedKernel {
   public:
    const char* name() const override { return "past-the-end"; }
    std::unique_ptr<PreparedKernel> prepare(const Kernel&) const override {
      return std::make_unique<PastTheEnd>();
    }
    void run(void* const* args) override { static_cast<float*>(args[1])[4] = 1; }
  };
  Kernel k;
  k.args = {KernelArg{DType::F32, 4, false}, KernelArg{DType::F32, 4, true}};
  const Bytes in(2, std::vector<uint8_t>(16, 0));
  std::string error, overrun;
  random_ops::run_backend(PastTheEnd(), k, in, &error, &overrun);
  EXPECT_EQ(error, "");
  EXPECT_EQ(overrun, "arg 1");
}

}  // namespace
}  // namespace ferrite
