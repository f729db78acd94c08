// The worker pool behind run_parts (thread_pool.h). Workers start on first use and live for
// the process.
//
// A job is published in two words. ticket_ = (generation << 32) | seats: a worker takes a
// seat with a compare-and-swap on the generation it saw, which caps a job at the threads
// asked for. claim_ = (generation << 32) | next part: the seated workers and the caller take
// parts with a compare-and-swap on it. The caller waits only until every part is done, never
// for a worker to take or give up its seat: a late worker finds the generation moved on (or
// no part left) and goes back to waiting. Before a new job's fields are written, claim_ is
// closed with the new generation and no part left, so that a late worker of the last job can
// no longer claim anything and only the holder of a claimed part reads the job.
//
// On a busy machine the scheduler may put a worker on the caller's core: it then runs only
// when the caller does not, so it sleeps instead of polling there; and after jobs in a row
// that no worker took a part of, jobs run on the caller alone (no wake-up calls) until a
// probe, after a while that doubles as long as the workers stay absent.
#include "runtime/kernels/portable/thread_pool.h"

#include "runtime/kernels/portable/thread_budget.h"

#ifdef __linux__
#include <sched.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace ferrite {
namespace {

using Clock = std::chrono::steady_clock;

// An idle worker polls this long for the next job, then sleeps: long enough to bridge the
// gaps between the parallel loops of one run (a sleeping worker costs the next job a
// wake-up: a system call for the caller, tens of microseconds until the worker runs), short
// enough not to hold a core long after the last one. Only time actually spent polling
// counts, not time spent descheduled.
constexpr auto kWorkerPoll = std::chrono::milliseconds(2);
constexpr auto kPollCheck = std::chrono::microseconds(20);  // 16 polls take about 2 us
// Jobs in a row without help after which jobs run on the caller alone, and the first and
// last wait before a probe.
constexpr int kUnhelpedJobs = 4;
constexpr auto kFirstProbe = std::chrono::milliseconds(1);
constexpr auto kLastProbe = std::chrono::milliseconds(128);
// The caller polls this long for the parts other threads hold, then yields its core between
// polls: the holder may be waiting for one.
constexpr auto kCallerPoll = std::chrono::microseconds(50);

constexpr uint64_t kClosed = 0xffffffffu;  // a next part no job reaches
constexpr int64_t kMaxParts = 1ll << 31;

thread_local bool in_part = false;

uint64_t generation(uint64_t word) {
  return word >> 32;
}
uint64_t low(uint64_t word) {
  return word & 0xffffffffu;
}

inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

int current_cpu() {
#ifdef __linux__
  return sched_getcpu();
#else
  return -1;
#endif
}

class Pool {
 public:
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  // False when another thread's job is running or the workers have been absent lately (the
  // caller then runs its parts itself).
  bool try_run(int threads, int64_t parts, PartFn f, const void* context) {
    std::unique_lock<std::mutex> one_job(job_mutex_, std::try_to_lock);
    if (!one_job.owns_lock()) return false;
    if (unhelped_ >= kUnhelpedJobs && Clock::now() < probe_at_ &&
        process_budget().mode() != BudgetMode::AllThreads)
      return false;
    const int helpers = static_cast<int>(std::min<int64_t>(threads, parts)) - 1;
    const uint64_t last = generation(ticket_.load()), next = last + 1;
    while (static_cast<int>(workers_.size()) < helpers) {
      workers_.emplace_back([this, last] { loop(last); });
    }
    claim_.store(next << 32 | kClosed);  // late workers of the last job stop here
    job_ = f;
    context_ = context;
    parts_.store(parts);
    done_.store(0);
    error_part_ = parts;
    error_ = nullptr;
    claim_.store(next << 32);
    caller_cpu_.store(current_cpu(), std::memory_order_relaxed);
    ticket_.store(next << 32 | static_cast<uint64_t>(helpers));
    if (sleepers_.load() > 0) {
      { std::lock_guard<std::mutex> lock(mutex_); }
      wake_.notify_all();
    }
    const int64_t mine = work(next);
    wait_done(parts);
    note_help(mine < parts);
    if (error_) std::rethrow_exception(error_);
    return true;
  }

  void rest() { rest_.fetch_add(1, std::memory_order_relaxed); }

 private:
  // After a job: whether a worker took a part of it.
  void note_help(bool helped) {
    if (helped) {
      unhelped_ = 0;
      backoff_ = kFirstProbe;
      return;
    }
    if (++unhelped_ < kUnhelpedJobs) return;
    probe_at_ = Clock::now() + backoff_;
    backoff_ = std::min<Clock::duration>(2 * backoff_, kLastProbe);
  }

  // Claims and runs parts of job `gen` until none is left (the caller and each seated
  // worker); returns how many it ran.
  int64_t work(uint64_t gen) {
    in_part = true;
    int64_t finished = 0;
    for (;;) {
      uint64_t c = claim_.load();
      if (generation(c) != gen || low(c) >= static_cast<uint64_t>(parts_.load())) break;
      if (!claim_.compare_exchange_weak(c, c + 1)) continue;
      run_one(static_cast<int64_t>(low(c)));
      ++finished;
    }
    in_part = false;
    if (finished > 0) done_.fetch_add(finished);
    return finished;
  }

  void run_one(int64_t part) {
    try {
      job_(context_, part);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex_);
      if (part < error_part_) {
        error_part_ = part;
        error_ = std::current_exception();
      }
    }
  }

  void wait_done(int64_t parts) {
    const Clock::time_point start = Clock::now();
    bool yielding = false;
    for (int i = 0; done_.load() != parts; ++i) {
      if (!yielding && (i & 15) == 15) yielding = Clock::now() - start > kCallerPoll;
      if (yielding) {
        std::this_thread::yield();
      } else {
        relax();
      }
    }
  }

  // Takes a seat in job `gen`, if one is left.
  bool take_seat(uint64_t gen) {
    uint64_t t = ticket_.load();
    while (generation(t) == gen && low(t) != 0) {
      if (ticket_.compare_exchange_weak(t, t - 1)) return true;
    }
    return false;
  }

  // Waits for a job after generation `seen`: polls, then sleeps. False when the pool stops.
  bool idle(uint64_t seen) {
    if (poll(seen)) return true;
    std::unique_lock<std::mutex> lock(mutex_);
    ++sleepers_;
    wake_.wait(lock, [&] { return stop_ || generation(ticket_.load()) != seen; });
    --sleepers_;
    return !stop_;
  }

  // Polls for a job after generation `seen`: true when one came, false when it is time to
  // sleep (polled long enough, rest() called, or polling on the caller's core).
  bool poll(uint64_t seen) {
    const uint64_t rest = rest_.load(std::memory_order_relaxed);
    Clock::time_point last = Clock::now();
    Clock::duration polled{0};
    for (int i = 1;; ++i) {
      if (generation(ticket_.load()) != seen) return true;
      if (rest_.load(std::memory_order_relaxed) != rest) return false;
      if ((i & 15) == 0) {
        const Clock::time_point now = Clock::now();
        polled += std::min<Clock::duration>(now - last, kPollCheck);
        last = now;
        if (polled > kWorkerPoll) return false;
        if (current_cpu() == caller_cpu_.load(std::memory_order_relaxed)) return false;
      }
      relax();
    }
  }

  void loop(uint64_t seen) {
    while (idle(seen)) {
      seen = generation(ticket_.load());
      if (take_seat(seen)) work(seen);
    }
  }

  std::mutex job_mutex_;  // one job at a time
  std::vector<std::thread> workers_;
  std::atomic<uint64_t> ticket_{0};
  std::atomic<uint64_t> claim_{kClosed};
  std::atomic<int64_t> parts_{0};
  std::atomic<int64_t> done_{0};
  PartFn job_ = nullptr;
  const void* context_ = nullptr;
  std::mutex error_mutex_;
  int64_t error_part_ = 0;
  std::exception_ptr error_;
  std::atomic<uint64_t> rest_{0};
  std::atomic<int> caller_cpu_{-1};  // where the last job was published from
  int unhelped_ = 0;                 // jobs in a row that no worker took a part of
  Clock::time_point probe_at_;
  Clock::duration backoff_ = kFirstProbe;
  std::mutex mutex_;  // sleeping workers
  std::condition_variable wake_;
  std::atomic<int> sleepers_{0};
  bool stop_ = false;
};

Pool& pool() {
  static Pool p;
  return p;
}

// Runs parts [begin, end) on the calling thread, with the same error rule as a pool job.
void run_serially(int64_t begin, int64_t end, PartFn f, const void* context) {
  std::exception_ptr error;
  for (int64_t p = begin; p < end; ++p) {
    try {
      f(context, p);
    } catch (...) {
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace

int pool_max_threads() {
  // Read once: hardware_concurrency reads a file in /sys (microseconds) at every call.
  static const int threads = [] {
    const unsigned cores = std::max(std::thread::hardware_concurrency(), 1u);
#ifdef __EMSCRIPTEN__
    return static_cast<int>(std::min(cores, 8u));
#else
    return static_cast<int>(cores);
#endif
  }();
  return threads;
}

void run_parts(int threads, int64_t parts, PartFn f, const void* context) {
  threads = std::min(threads, pool_max_threads());
  if (parts <= 0) return;
  if (threads <= 1 || parts == 1 || in_part) return run_serially(0, parts, f, context);
  if (parts >= kMaxParts) {  // more than the claim word counts: runs of parts
    const int64_t groups = kMaxParts - 1, each = parts / groups, extra = parts % groups;
    return run_parts(threads, groups, [&](int64_t g) {
      const int64_t begin = each * g + std::min(g, extra);
      run_serially(begin, begin + each + (g < extra ? 1 : 0), f, context);
    });
  }
  if (!pool().try_run(threads, parts, f, context)) run_serially(0, parts, f, context);
}

void pool_rest() {
  pool().rest();
}

}  // namespace ferrite
