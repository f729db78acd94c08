// The worker pool behind run_parts (thread_pool.h). Workers start on first use and live for
// the process. A job is published as a ticket, (generation << 32) | helper slots; a worker
// takes a slot with a compare-and-swap on the ticket of the generation it saw, then takes
// parts through an atomic counter. Workers poll a while before they sleep (as OpenMP's
// threads do), and the caller polls while the parts finish.
#include "runtime/kernels/portable/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace ferrite {
namespace {

thread_local bool in_part = false;

// How many times a worker polls for the next job before it sleeps. Polling longer (2 ms)
// measured slower in wasm on 2 cores: the pollers compete with the threads that work.
constexpr int kSpins = 1 << 16;

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

  void run(int threads, int64_t parts, const std::function<void(int64_t)>& f) {
    std::lock_guard<std::mutex> one_job(job_mutex_);
    const int helpers = static_cast<int>(std::min<int64_t>(threads, parts)) - 1;
    while (static_cast<int>(workers_.size()) < helpers) {
      workers_.emplace_back([this] { loop(); });
    }
    // No worker holds a slot of an earlier job (the last one revoked its slots and waited
    // for busy_ to drop), so the job's fields are ours to write.
    job_ = &f;
    parts_ = parts;
    next_.store(0);
    done_.store(0);
    const uint64_t generation = (ticket_.load() >> 32) + 1;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ticket_.store(generation << 32 | static_cast<uint64_t>(helpers));
    }
    wake_.notify_all();
    work();
    while (done_.load() != parts_) std::this_thread::yield();
    ticket_.store(generation << 32);  // revoke the slots no worker took
    while (busy_.load() != 0) std::this_thread::yield();
  }

 private:
  // Takes parts until none are left (the caller and each helper).
  void work() {
    in_part = true;
    int64_t finished = 0;
    for (int64_t p; (p = next_.fetch_add(1)) < parts_;) {
      (*job_)(p);
      ++finished;
    }
    in_part = false;
    done_.fetch_add(finished);
  }

  // Takes a helper slot of generation `generation`, if one is left.
  bool claim(uint64_t generation) {
    uint64_t t = ticket_.load();
    while ((t >> 32) == generation && (t & 0xffffffffu) != 0) {
      if (ticket_.compare_exchange_weak(t, t - 1)) return true;
    }
    return false;
  }

  void loop() {
    uint64_t seen = ticket_.load() >> 32;
    for (;;) {
      for (int spins = 0; (ticket_.load() >> 32) == seen && spins < kSpins;) ++spins;
      if ((ticket_.load() >> 32) == seen) {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || (ticket_.load() >> 32) != seen; });
        if (stop_) return;
      }
      seen = ticket_.load() >> 32;
      busy_.fetch_add(1);
      if (claim(seen)) work();
      busy_.fetch_sub(1);
    }
  }

  std::mutex job_mutex_;  // one job at a time
  std::mutex mutex_;      // sleeping workers
  std::condition_variable wake_;
  std::vector<std::thread> workers_;
  const std::function<void(int64_t)>* job_ = nullptr;
  int64_t parts_ = 0;
  std::atomic<uint64_t> ticket_{0};
  std::atomic<int64_t> next_{0};
  std::atomic<int64_t> done_{0};
  std::atomic<int> busy_{0};
  bool stop_ = false;
};

}  // namespace

int pool_max_threads() {
  const unsigned cores = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(cores, 1u, 8u));
}

void run_parts(int threads, int64_t parts, const std::function<void(int64_t)>& f) {
  threads = std::min(threads, pool_max_threads());
  if (threads <= 1 || parts <= 1 || in_part) {
    for (int64_t p = 0; p < parts; ++p) f(p);
    return;
  }
  static Pool pool;
  pool.run(threads, parts, f);
}

}  // namespace ferrite
