// The worker pool of runtime/kernels/portable/thread_pool.h: every part runs exactly once,
// on up to the threads asked for, from several calling threads at once and from inside a
// part; errors from parts; a thread stuck in one part does not hold back the others.
#include "runtime/kernels/portable/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runtime/kernels/portable/parallel.h"
#include "runtime/kernels/portable/thread_budget.h"

namespace ferrite {
namespace {

TEST(ThreadPool, EveryPartRunsOnceOnAtMostTheThreadsAsked) {
  for (int threads : {1, 2, 3, 8}) {
    for (int64_t parts : {0, 1, 2, 7, 100}) {
      std::vector<std::atomic<int>> runs(static_cast<size_t>(parts));
      std::mutex m;
      std::set<std::thread::id> ids;
      run_parts(threads, parts, [&](int64_t p) {
        runs[static_cast<size_t>(p)]++;
        std::lock_guard<std::mutex> lock(m);
        ids.insert(std::this_thread::get_id());
      });
      for (int64_t p = 0; p < parts; ++p) EXPECT_EQ(runs[static_cast<size_t>(p)], 1) << p;
      EXPECT_LE(static_cast<int>(ids.size()), std::min(threads, pool_max_threads()));
    }
  }
}

TEST(ThreadPool, ManyJobsInARowEachRunEveryPartOnce) {
  // Workers that arrive late for one job must not take parts of the next (the claim word
  // carries the job's generation).
  std::mt19937 rng(5);
  std::vector<std::atomic<int>> runs(64);
  for (int job = 0; job < 3000; ++job) {
    const int64_t parts = std::uniform_int_distribution<int64_t>(2, 64)(rng);
    for (auto& r : runs) r = 0;
    run_parts(4, parts, [&](int64_t p) { runs[static_cast<size_t>(p)]++; });
    for (int64_t p = 0; p < 64; ++p)
      ASSERT_EQ(runs[static_cast<size_t>(p)], p < parts ? 1 : 0) << "job " << job << " part " << p;
  }
}

TEST(ThreadPool, ThrowingPartsLetTheOthersRunAndTheLowestErrorReachesTheCaller) {
  for (int threads : {1, 2, 4}) {
    std::vector<std::atomic<int>> runs(40);
    try {
      run_parts(threads, 40, [&](int64_t p) {
        runs[static_cast<size_t>(p)]++;
        if (p == 31 || p == 7 || p == 19) throw std::runtime_error("part " + std::to_string(p));
      });
      ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "part 7");
    }
    for (int p = 0; p < 40; ++p) EXPECT_EQ(runs[static_cast<size_t>(p)], 1) << p;
    // The pool still works after a job that threw.
    std::atomic<int64_t> sum{0};
    run_parts(threads, 10, [&](int64_t p) { sum += p; });
    EXPECT_EQ(sum.load(), 45);
  }
}

TEST(ThreadPool, AThreadStuckInOnePartDoesNotHoldBackTheOthers) {
  // Part 0 waits until every other part is done: with a static split, whichever thread owns
  // part 0 would also own some of the others, and the job would never end. Parts are
  // claimed one at a time here, so the other thread (the caller or a worker) takes them all.
  // The wait is bounded so that a broken pool fails instead of hanging. Through
  // parallel_parts, as the portable externs call it; with the budget at all threads, so
  // that the pool does not run jobs on the caller alone (as it does after jobs no worker
  // helped with, on a busy machine).
  if (pool_max_threads() < 2) GTEST_SKIP() << "one core";
  process_budget().set_mode(BudgetMode::AllThreads);
  for (int round = 0; round < 20; ++round) {
    std::atomic<int> others_done{0};
    std::atomic<bool> gave_up{false};
    constexpr int kParts = 50;
    parallel_parts(2, kParts, [&](int64_t p) {
      if (p != 0) {
        ++others_done;
        return;
      }
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (others_done.load() < kParts - 1) {
        if (std::chrono::steady_clock::now() > deadline) {
          gave_up = true;
          return;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    });
    EXPECT_FALSE(gave_up.load()) << "round " << round;
    EXPECT_EQ(others_done.load(), kParts - 1);
  }
  process_budget().set_mode(BudgetMode::Adaptive);
}

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)  // the test makes threads
TEST(ThreadPool, CallsFromSeveralThreadsAndNestedCalls) {
  std::atomic<int64_t> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int r = 0; r < 50; ++r) {
        run_parts(3, 6, [&](int64_t p) {
          // A nested call runs serially on this thread.
          run_parts(3, 4, [&](int64_t q) { total += p * 4 + q; });
        });
      }
    });
  }
  for (std::thread& t : callers) t.join();
  // Each call sums 0..23 = 276.
  EXPECT_EQ(total.load(), 4 * 50 * 276);
}

TEST(ThreadPool, RestSendsIdleWorkersToSleepAndTheNextJobWakesThem) {
  for (int r = 0; r < 200; ++r) {
    std::atomic<int> runs{0};
    run_parts(2, 8, [&](int64_t) { ++runs; });
    EXPECT_EQ(runs.load(), 8);
    pool_rest();
    if (r % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}
#endif

}  // namespace
}  // namespace ferrite
