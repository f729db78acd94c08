// How many threads a parallel step whose work is split statically between its threads
// should use now. Such a step (a oneDNN primitive: its split is fixed when it is created)
// ends when its last thread has done its share, so on a machine busy with other work it
// waits, each time, for whichever thread is not running. The calling thread's wait for a
// core (its schedstat run delay) over a window of such steps tells: when its threads got
// much less than the cores they asked for in two windows in a row, steps run on one thread; after a
// while (50 ms, doubling up to 1.6 s while the machine stays busy) a window runs on all threads
// again to look. FERRITE_THREAD_BUDGET=all (never fall back; the worker pool of thread_pool.h does
// not either) or =one (always) in the environment fixes it.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

namespace ferrite {

// `threads`, or 1 while the machine is judged too busy for a static split. Thread-safe.
int budget_threads(int threads);

// Measures one step run on `threads` threads, from construction to destruction, into the
// window budget_threads judges from. Nothing is measured for one thread.
class ParallelStepClock {
 public:
  explicit ParallelStepClock(int threads);
  ~ParallelStepClock();
  ParallelStepClock(const ParallelStepClock&) = delete;
  ParallelStepClock& operator=(const ParallelStepClock&) = delete;

 private:
  int threads_;
  int64_t wall_ns_ = 0, cpu_ns_ = 0, delay_ns_ = -1;
};

// What a budget decided so far (reports, tests).
struct BudgetStats {
  int64_t windows = 0;       // windows judged
  int64_t busy_windows = 0;  // of those, the ones whose threads got too little CPU time
  int64_t fallbacks = 0;     // switches to one thread
};

enum class BudgetMode { Adaptive, AllThreads, OneThread };

// The judgement behind budget_threads, on the times it is given (one instance per process
// there; tests make their own).
class ThreadBudget {
 public:
  static constexpr int64_t kWindowNs = 2'000'000;
  static constexpr double kMinShare = 0.75;
  static constexpr int kBusyWindows = 2;
  static constexpr int64_t kFirstProbeNs = 50'000'000, kLastProbeNs = 1'600'000'000;

  explicit ThreadBudget(BudgetMode mode = BudgetMode::Adaptive) : mode_(mode) {}
  // `asked` or 1, at time `now_ns` (a monotonic clock).
  int threads(int asked, int64_t now_ns);
  // A step that ran on `threads` threads for `wall_ns`, in which the process got `cpu_ns`
  // of CPU time.
  void record(int threads, int64_t wall_ns, int64_t cpu_ns, int64_t now_ns);
  BudgetStats stats();
  void set_mode(BudgetMode mode);
  BudgetMode mode() const { return mode_.load(std::memory_order_relaxed); }

 private:
  void clear_window() { wall_ = capacity_ = cpu_ = 0; }

  std::mutex mutex_;
  std::atomic<BudgetMode> mode_;
  bool one_thread_ = false;
  int busy_in_row_ = 0;
  int64_t probe_at_ = 0, parallel_since_ = 0, backoff_ = kFirstProbeNs;
  int64_t wall_ = 0, capacity_ = 0, cpu_ = 0;
  BudgetStats stats_;
};

// The process's budget (budget_threads, ParallelStepClock): its mode from
// FERRITE_THREAD_BUDGET (all, one, or auto: the default).
ThreadBudget& process_budget();

}  // namespace ferrite
