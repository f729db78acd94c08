// thread_budget.h's judgement on given times: when steps fall back to one thread, when they
// look again, and the fixed modes.
#include "runtime/kernels/portable/thread_budget.h"

#include <gtest/gtest.h>

namespace ferrite {
namespace {

constexpr int64_t kMs = 1'000'000;

TEST(ThreadBudget, FallsBackAfterTwoBusyWindowsAndLooksAgainLater) {
  ThreadBudget b;
  int64_t now = 0;
  auto window = [&](double share) {  // one 2 ms step, CPU time share x 2 threads x wall
    const int64_t wall = ThreadBudget::kWindowNs;
    now += wall;
    b.record(2, wall, static_cast<int64_t>(share * 2 * static_cast<double>(wall)), now);
  };
  window(0.95);
  window(0.5);
  EXPECT_EQ(b.threads(2, now), 2);  // one busy window is not enough
  window(0.9);
  window(0.5);
  window(0.5);
  EXPECT_EQ(b.threads(2, now), 1);
  EXPECT_EQ(b.stats().fallbacks, 1);
  EXPECT_EQ(b.threads(2, now + ThreadBudget::kFirstProbeNs - 1), 1);
  // The probe: all threads again, and one busy window is enough to fall back, for twice as
  // long.
  now += ThreadBudget::kFirstProbeNs;
  EXPECT_EQ(b.threads(2, now), 2);
  window(0.4);
  EXPECT_EQ(b.threads(2, now), 1);
  EXPECT_EQ(b.threads(2, now + 2 * ThreadBudget::kFirstProbeNs - 1), 1);
  now += 2 * ThreadBudget::kFirstProbeNs;
  EXPECT_EQ(b.threads(2, now), 2);
  // A quiet probe keeps all threads.
  window(0.97);
  window(0.5);
  window(0.96);
  EXPECT_EQ(b.threads(2, now), 2);
  EXPECT_EQ(b.stats().windows, 9);
  EXPECT_EQ(b.stats().busy_windows, 5);
  EXPECT_EQ(b.stats().fallbacks, 2);
}

TEST(ThreadBudget, ShortStepsAddUpToAWindowAndOneThreadIsNeverCut) {
  ThreadBudget b;
  int64_t now = 0;
  for (int i = 0; i < 40; ++i) {  // 40 x 0.1 ms at a share of 0.3: two busy windows
    now += kMs / 10;
    b.record(2, kMs / 10, static_cast<int64_t>(0.3 * 2 * kMs / 10), now);
  }
  EXPECT_EQ(b.stats().windows, 2);
  EXPECT_EQ(b.threads(4, now), 1);
  EXPECT_EQ(b.threads(1, now), 1);
}

TEST(ThreadBudget, FixedModes) {
  ThreadBudget all(BudgetMode::AllThreads), one(BudgetMode::OneThread);
  for (int i = 0; i < 10; ++i) all.record(2, 10 * kMs, kMs, 10 * kMs * (i + 1));
  EXPECT_EQ(all.threads(2, 200 * kMs), 2);
  EXPECT_EQ(one.threads(2, 0), 1);
  EXPECT_EQ(one.threads(1, 0), 1);
}

}  // namespace
}  // namespace ferrite
