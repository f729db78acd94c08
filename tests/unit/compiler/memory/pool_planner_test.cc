// plan_pool: on thousands of random instances (fixed seed) no two buffers that are live at
// the same step share a byte, offsets are aligned, the pool is at least the lower bound, the
// lower bound matches a brute-force count, and the pool stays close to it on average and in
// the worst case; on chains and simple shapes the pool is optimal.
#include "compiler/memory/pool_planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>

#include "compiler/plan/error.h"

namespace ferrite {
namespace {

int64_t rounded(int64_t bytes) {
  return (bytes + 63) / 64 * 64;
}

// The oracle for lower_bound: at every step, add up the rounded sizes of the live buffers.
int64_t brute_force_peak(const std::vector<LiveBuffer>& bufs) {
  int last = 0;
  for (const LiveBuffer& b : bufs) last = std::max(last, b.last);
  int64_t peak = 0;
  for (int s = 0; s <= last; ++s) {
    int64_t live = 0;
    for (const LiveBuffer& b : bufs)
      if (b.first <= s && s <= b.last) live += rounded(b.bytes);
    peak = std::max(peak, live);
  }
  return peak;
}

void expect_sound(const std::vector<LiveBuffer>& bufs, const PoolPlan& plan) {
  ASSERT_EQ(plan.offsets.size(), bufs.size());
  EXPECT_EQ(plan.lower_bound, brute_force_peak(bufs));
  EXPECT_GE(plan.pool_bytes, plan.lower_bound);
  EXPECT_EQ(plan.pool_bytes % kPoolAlignment, 0);
  for (size_t i = 0; i < bufs.size(); ++i) {
    EXPECT_GE(plan.offsets[i], 0);
    EXPECT_EQ(plan.offsets[i] % kPoolAlignment, 0) << "buffer " << i;
    EXPECT_LE(plan.offsets[i] + bufs[i].bytes, plan.pool_bytes) << "buffer " << i;
    for (size_t j = 0; j < i; ++j) {
      bool live_together = bufs[i].first <= bufs[j].last && bufs[j].first <= bufs[i].last;
      bool share_bytes = plan.offsets[i] < plan.offsets[j] + bufs[j].bytes &&
                         plan.offsets[j] < plan.offsets[i] + bufs[i].bytes;
      EXPECT_FALSE(live_together && share_bytes) << "buffers " << j << " and " << i;
    }
  }
}

std::vector<LiveBuffer> random_instance(std::mt19937& rng) {
  std::uniform_int_distribution<int> count(1, 60), steps(1, 40), kind(0, 9);
  std::uniform_int_distribution<int64_t> small(0, 4096), big(4096, 1 << 20);
  int n = count(rng), num_steps = steps(rng);
  std::vector<LiveBuffer> bufs(n);
  for (LiveBuffer& b : bufs) {
    b.bytes = kind(rng) < 7 ? small(rng) : big(rng);
    std::uniform_int_distribution<int> first(0, num_steps - 1);
    b.first = first(rng);
    // Mostly short ranges (a producer and its consumers), some long-lived ones.
    std::uniform_int_distribution<int> len(0, kind(rng) < 8 ? 3 : num_steps);
    b.last = std::min(num_steps - 1, b.first + len(rng));
  }
  return bufs;
}

// Like a model's plan: step i writes buffer i, read by the next 1-3 steps or (20%) by a
// step up to 12 later (a skip connection); sizes drift as layers shrink and grow.
std::vector<LiveBuffer> model_like_instance(std::mt19937& rng) {
  std::uniform_int_distribution<int> steps(5, 200), kind(0, 9), reach(1, 3), skip(2, 12);
  std::uniform_int_distribution<int> scale(0, 4);
  const int n = steps(rng);
  std::vector<LiveBuffer> bufs(n);
  int64_t base = 1 << 16;
  for (int i = 0; i < n; ++i) {
    if (kind(rng) == 0) base = std::max<int64_t>(256, base / 2);
    if (kind(rng) == 1) base *= 2;
    bufs[i].bytes = base * (1 + scale(rng)) / 2 + (kind(rng) < 2 ? 4096 : 0);
    bufs[i].first = i;
    bufs[i].last = i + (kind(rng) < 2 ? skip(rng) : reach(rng));
  }
  return bufs;
}

// Plans `instances` instances from `make`, checks each is sound, prints the mean and worst
// pool / lower bound and checks them against the given limits. The limits are what the
// planner reaches with some margin; the planner before the breadth order, the lowest-gap
// placement and the local search had mean 1.0040 and 1.0197 on these (worst 1.43).
template <class Make>
void expect_tight(const char* what, Make make, int instances, double max_mean, double max_worst,
                  int64_t max_conflict_pairs = kMaxConflictPairs) {
  std::mt19937 rng(20240611);
  double ratio_sum = 0, worst = 1;
  int at_bound = 0;
  for (int t = 0; t < instances; ++t) {
    std::vector<LiveBuffer> bufs = make(rng);
    PoolPlan plan = plan_pool(bufs, max_conflict_pairs);
    SCOPED_TRACE(t);
    expect_sound(bufs, plan);
    double r = plan.lower_bound ? static_cast<double>(plan.pool_bytes) / plan.lower_bound : 1.0;
    ratio_sum += r;
    worst = std::max(worst, r);
    at_bound += plan.pool_bytes == plan.lower_bound;
  }
  const double mean = ratio_sum / instances;
  std::printf("%s: pool/lower_bound over %d instances: mean %.4f, worst %.4f, %d at the bound\n",
              what, instances, mean, worst, at_bound);
  EXPECT_LT(mean, max_mean);
  EXPECT_LT(worst, max_worst);
}

TEST(PoolPlannerTest, RandomInstancesAreSoundAndTight) {
  expect_tight("random", random_instance, 3000, 1.002, 1.2);
}

TEST(PoolPlannerTest, ModelLikeInstancesAreSoundAndTight) {
  expect_tight("model-like", model_like_instance, 1000, 1.004, 1.25);
}

TEST(PoolPlannerTest, ChainsAreOptimal) {
  // x0 -> x1 -> ... : buffer i is written at step i and read at step i+1.
  std::mt19937 rng(7);
  std::uniform_int_distribution<int64_t> size(1, 100000);
  for (int t = 0; t < 100; ++t) {
    std::vector<LiveBuffer> bufs(2 + t % 20);
    for (size_t i = 0; i < bufs.size(); ++i) bufs[i] = {size(rng), int(i), int(i) + 1};
    PoolPlan plan = plan_pool(bufs);
    expect_sound(bufs, plan);
    EXPECT_EQ(plan.pool_bytes, plan.lower_bound) << "chain " << t;
  }
}

// The placement in step order, which plans with too many buffers live together get: the
// same instances, every one through it (an allocator's packing: mean 1.10 and 1.15).
TEST(PoolPlannerTest, SweepPlacementIsSound) {
  expect_tight("sweep, random", random_instance, 3000, 1.12, 2.0, 0);
  expect_tight("sweep, model-like", model_like_instance, 300, 1.18, 1.6, 0);
}

// 20,000 buffers live together (a concatenation of as many values): past the pairs the
// greedy placement looks at, stacked in step order, exactly the lower bound.
TEST(PoolPlannerTest, ManyBuffersLiveTogether) {
  std::vector<LiveBuffer> bufs;
  for (int i = 0; i < 20000; ++i) bufs.push_back({64 * (1 + i % 7), i, 20000 + i % 3});
  PoolPlan plan = plan_pool(bufs);
  EXPECT_EQ(plan.pool_bytes, plan.lower_bound);
  for (size_t i = 1; i < bufs.size(); ++i)
    EXPECT_EQ(plan.offsets[i], plan.offsets[i - 1] + bufs[i - 1].bytes) << i;
}

TEST(PoolPlannerTest, SimpleShapes) {
  // Disjoint ranges share offset 0; all-overlapping ranges stack up.
  PoolPlan disjoint = plan_pool({{100, 0, 0}, {200, 1, 1}, {64, 2, 3}});
  EXPECT_EQ(disjoint.offsets, (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(disjoint.pool_bytes, 256);
  EXPECT_EQ(disjoint.lower_bound, 256);
  PoolPlan stacked = plan_pool({{100, 0, 5}, {200, 0, 5}, {1, 0, 5}});
  EXPECT_EQ(stacked.offsets, (std::vector<int64_t>{256, 0, 384}));
  EXPECT_EQ(stacked.pool_bytes, 448);
  EXPECT_EQ(stacked.lower_bound, 448);
  // A small buffer fills the hole a dead big one left while a long-lived one stays.
  PoolPlan hole = plan_pool({{1000, 0, 1}, {640, 0, 4}, {512, 2, 3}});
  EXPECT_EQ(hole.offsets, (std::vector<int64_t>{0, 1024, 0}));
  EXPECT_EQ(hole.pool_bytes, 1664);
  PoolPlan none = plan_pool({});
  EXPECT_EQ(none.pool_bytes, 0);
  EXPECT_EQ(none.lower_bound, 0);
  PoolPlan zero = plan_pool({{0, 0, 3}, {64, 1, 1}});
  EXPECT_EQ(zero.pool_bytes, 64);
}

TEST(PoolPlannerTest, BadInputThrows) {
  EXPECT_THROW(plan_pool({{-1, 0, 0}}), Error);
  EXPECT_THROW(plan_pool({{8, 3, 2}}), Error);
  EXPECT_THROW(plan_pool({{8, -1, 2}}), Error);
  EXPECT_THROW(plan_pool({{INT64_MAX, 0, 0}}), Error);
  int64_t half = (INT64_MAX / 2) & ~int64_t{63};
  EXPECT_THROW(plan_pool({{half, 0, 0}, {half, 0, 0}, {half, 0, 0}}), Error);
}

}  // namespace
}  // namespace ferrite
