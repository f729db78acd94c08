#include "runtime/kernels/portable/thread_budget.h"

#include <time.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace ferrite {
namespace {

int64_t now_ns(clockid_t clock) {
  timespec t;
  clock_gettime(clock, &t);
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

BudgetMode mode_from_environment() {
  const char* v = std::getenv("FERRITE_THREAD_BUDGET");
  if (v && std::strcmp(v, "all") == 0) return BudgetMode::AllThreads;
  if (v && std::strcmp(v, "one") == 0) return BudgetMode::OneThread;
  return BudgetMode::Adaptive;
}

}  // namespace

// A window's wall time (kWindowNs) is long enough that a worker's wake-up (tens of
// microseconds) does not count. Its share (CPU time over threads x wall time) is about 1 on
// a quiet machine, every thread working or polling; with two other busy threads on two
// cores about 0.5 at best: below kMinShare the window is busy.
int ThreadBudget::threads(int asked, int64_t now_ns) {
  if (asked <= 1) return 1;
  std::lock_guard<std::mutex> lock(mutex_);
  const BudgetMode mode = mode_.load();
  if (mode != BudgetMode::Adaptive) return mode == BudgetMode::AllThreads ? asked : 1;
  if (!one_thread_) return asked;
  if (now_ns < probe_at_) return 1;
  // Look again: one busy window sends the steps back to one thread.
  one_thread_ = false;
  busy_in_row_ = kBusyWindows - 1;
  clear_window();
  return asked;
}

void ThreadBudget::record(int threads, int64_t wall_ns, int64_t cpu_ns, int64_t now_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (mode_ != BudgetMode::Adaptive || one_thread_) return;  // one_thread_: began before it
  wall_ += wall_ns;
  capacity_ += threads * wall_ns;
  cpu_ += cpu_ns;
  if (wall_ < kWindowNs) return;
  const bool busy = static_cast<double>(cpu_) < kMinShare * static_cast<double>(capacity_);
  clear_window();
  ++stats_.windows;
  if (!busy) {
    busy_in_row_ = 0;
    if (now_ns - parallel_since_ > kLastProbeNs) backoff_ = kFirstProbeNs;  // settled
    return;
  }
  ++stats_.busy_windows;
  if (++busy_in_row_ < kBusyWindows) return;
  one_thread_ = true;
  ++stats_.fallbacks;
  probe_at_ = now_ns + backoff_;
  parallel_since_ = probe_at_;
  backoff_ = std::min(2 * backoff_, kLastProbeNs);
}

BudgetStats ThreadBudget::stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void ThreadBudget::set_mode(BudgetMode mode) {
  std::lock_guard<std::mutex> lock(mutex_);
  mode_ = mode;
  one_thread_ = false;
  busy_in_row_ = 0;
  clear_window();
}

ThreadBudget& process_budget() {
  static ThreadBudget budget(mode_from_environment());
  return budget;
}

int budget_threads(int threads) {
  return threads <= 1 ? 1 : process_budget().threads(threads, now_ns(CLOCK_MONOTONIC));
}

ParallelStepClock::ParallelStepClock(int threads) : threads_(threads) {
  if (threads_ <= 1) return;
  wall_ns_ = now_ns(CLOCK_MONOTONIC);
  cpu_ns_ = now_ns(CLOCK_PROCESS_CPUTIME_ID);
}

ParallelStepClock::~ParallelStepClock() {
  if (threads_ <= 1) return;
  const int64_t cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu_ns_;
  const int64_t now = now_ns(CLOCK_MONOTONIC);
  process_budget().record(threads_, now - wall_ns_, cpu, now);
}

}  // namespace ferrite
