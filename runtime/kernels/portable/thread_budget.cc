#include "runtime/kernels/portable/thread_budget.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
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

namespace {

// The calling thread's time spent runnable but waiting for a core (the second field of
// /proc/thread-self/schedstat, in ns), or -1 where the kernel does not say. The file stays
// open per thread: a pread costs about a microsecond, an open ten.
int64_t run_delay_ns() {
  thread_local int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[96];
  const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return -1;
  buf[n] = 0;
  unsigned long long on_cpu = 0, waited = 0;
  if (std::sscanf(buf, "%llu %llu", &on_cpu, &waited) != 2) return -1;
  return static_cast<int64_t>(waited);
}

}  // namespace

// What tells a busy machine: the calling thread's wait for a core during the step. Under
// the scheduler's fair share every thread of the team waits about as much as the caller, so
// the team ran threads x (wall - wait). (The process's CPU time said the same only where
// every thread of a step computes or spins all along: a oneDNN primitive that runs on one
// thread, or Ferrite's pool workers polling beside it, made a quiet machine look busy or a
// busy one quiet.) Where schedstat is missing, the process's CPU time is the measure.
ParallelStepClock::ParallelStepClock(int threads) : threads_(threads) {
  if (threads_ <= 1) return;
  wall_ns_ = now_ns(CLOCK_MONOTONIC);
  delay_ns_ = run_delay_ns();
  cpu_ns_ = delay_ns_ < 0 ? now_ns(CLOCK_PROCESS_CPUTIME_ID) : 0;
}

ParallelStepClock::~ParallelStepClock() {
  if (threads_ <= 1) return;
  const int64_t now = now_ns(CLOCK_MONOTONIC);
  const int64_t wall = now - wall_ns_;
  int64_t ran;
  const int64_t delay = delay_ns_ < 0 ? -1 : run_delay_ns();
  if (delay >= 0) {
    ran = threads_ * std::max<int64_t>(0, wall - (delay - delay_ns_));
  } else {
    ran = now_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu_ns_;
  }
  process_budget().record(threads_, wall, ran, now);
}

}  // namespace ferrite
