// The worker pool behind run_parts (thread_pool.h): workers are started on first use and
// live for the process; a job hands out parts through an atomic counter.
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
    start_workers(helpers);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &f;
      parts_ = parts;
      next_.store(0);
      done_ = 0;
      helpers_wanted_ = helpers;
      ++generation_;
    }
    wake_.notify_all();
    work();
    std::unique_lock<std::mutex> lock(mutex_);
    finished_.wait(lock, [&] { return done_ == parts_ && helpers_busy_ == 0; });
    job_ = nullptr;
  }

 private:
  void start_workers(int n) {
    while (static_cast<int>(workers_.size()) < n) workers_.emplace_back([this] { loop(); });
  }

  // Takes parts until none are left (the caller and each helper).
  void work() {
    in_part = true;
    int64_t finished = 0;
    for (int64_t p; (p = next_.fetch_add(1)) < parts_;) {
      (*job_)(p);
      ++finished;
    }
    in_part = false;
    std::lock_guard<std::mutex> lock(mutex_);
    done_ += finished;
    if (done_ == parts_) finished_.notify_all();
  }

  void loop() {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || (generation_ != seen && helpers_wanted_ > 0); });
      if (stop_) return;
      seen = generation_;
      --helpers_wanted_;
      ++helpers_busy_;
      lock.unlock();
      work();
      lock.lock();
      if (--helpers_busy_ == 0) finished_.notify_all();
    }
  }

  std::mutex job_mutex_;  // one job at a time
  std::mutex mutex_;
  std::condition_variable wake_, finished_;
  std::vector<std::thread> workers_;
  const std::function<void(int64_t)>* job_ = nullptr;
  int64_t parts_ = 0;
  std::atomic<int64_t> next_{0};
  int64_t done_ = 0;
  int helpers_wanted_ = 0;
  int helpers_busy_ = 0;
  uint64_t generation_ = 0;
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
