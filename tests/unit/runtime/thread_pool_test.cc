// The worker pool of the threaded wasm build (runtime/kernels/portable/thread_pool.h),
// exercised natively: every part runs exactly once, on up to the threads asked for, from
// several calling threads at once and from inside a part.
#include "runtime/kernels/portable/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

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
#endif

}  // namespace
}  // namespace ferrite
