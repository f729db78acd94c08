// The contract of libhwy's out-of-line functions, checked against Debian's libhwy natively
// and against wasm/hwy_shim.cc in the wasm build (where Abort must throw, not abort).
#include <gtest/gtest.h>

#include <cstdint>

#include "compiler/plan/error.h"
#include "hwy/aligned_allocator.h"
#include "hwy/targets.h"
#include "runtime/kernels/portable/simd_f32.h"

namespace ferrite {
namespace {

int live_objects = 0;

struct Counted {
  Counted() { ++live_objects; }
  ~Counted() { --live_objects; }
  int payload[3] = {1, 2, 3};
};

TEST(HwyShim, AlignedAllocationsAreAlignedAndWritable) {
  for (size_t n : {size_t{1}, size_t{63}, size_t{64}, size_t{1000}}) {  // libhwy aborts on 0
    hwy::AlignedFreeUniquePtr<uint8_t[]> p = hwy::AllocateAligned<uint8_t>(n);
    ASSERT_NE(p.get(), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p.get()) % HWY_ALIGNMENT, 0u) << n;
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(i);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(p[i], static_cast<uint8_t>(i));
  }
}

TEST(HwyShim, AlignedArraysDestroyEveryElement) {
  {
    hwy::AlignedUniquePtr<Counted[]> arr = hwy::MakeUniqueAlignedArray<Counted>(5);
    EXPECT_EQ(live_objects, 5);
    EXPECT_EQ(arr[4].payload[2], 3);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(arr.get()) % HWY_ALIGNMENT, 0u);
  }
  EXPECT_EQ(live_objects, 0);
}

TEST(HwyShim, SomeTargetIsAlwaysSupported) {
  hwy::DisableTargets(0);  // what FERRITE_ISA disabled (simd_f32.h) comes back at the end
  const int64_t all = hwy::SupportedTargets();
  EXPECT_NE(all, 0);
  hwy::DisableTargets(~int64_t{0});  // disabling everything still leaves one to call
  EXPECT_NE(hwy::SupportedTargets(), 0);
  hwy::DisableTargets(0);
  EXPECT_EQ(hwy::SupportedTargets(), all);
  hwy::DisableTargets(simd::isa_disabled_targets());
#ifdef __EMSCRIPTEN__
  EXPECT_NE(all & HWY_WASM, 0);
#endif
}

#ifdef __EMSCRIPTEN__
TEST(HwyShim, AbortThrowsFerriteError) {
  try {
    HWY_ABORT("lane %d out of range", 7);
    FAIL() << "HWY_ABORT returned";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("lane 7 out of range"), std::string::npos) << e.what();
  }
}
#endif

}  // namespace
}  // namespace ferrite
