// Stage timings (FERRITE_TIMINGS=1): the work from a model's bytes to a Session ready to
// run, stage by stage — ONNX import, each graph pass, lowering, scheduling and fusion, plan
// emission and memory planning, plan checks and (de)serialization, each backend's kernel
// preparation. A StageTimer adds its scope's wall and thread CPU time to its stage's row;
// when the process exits it prints one line per stage to stderr, in order of first use:
//   timing: <stage> wall <ms> cpu <ms> calls <n>
// Stages nest (`lower` holds `lower/trace`), so rows do not sum. tests/perf/compile_scaling.py
// reads these lines. Off (the default), a timer reads no clock: one cached getenv.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>
#include <vector>

namespace ferrite {
namespace stage_times_detail {

struct Row {
  std::string stage;
  double wall_ms = 0, cpu_ms = 0;
  long calls = 0;
};

struct Table {
  bool on = false;
  std::mutex mu;
  std::vector<Row> rows;

  Table() {
    const char* v = std::getenv("FERRITE_TIMINGS");
    on = v && *v && std::strcmp(v, "0") != 0;
  }
  ~Table() {
    for (const Row& r : rows) {
      std::fprintf(stderr, "timing: %s wall %.3f cpu %.3f calls %ld\n", r.stage.c_str(), r.wall_ms,
                   r.cpu_ms, r.calls);
    }
  }
  void add(const char* stage, double wall_ms, double cpu_ms) {
    std::lock_guard<std::mutex> lock(mu);
    for (Row& r : rows) {
      if (r.stage == stage) {
        r.wall_ms += wall_ms;
        r.cpu_ms += cpu_ms;
        ++r.calls;
        return;
      }
    }
    rows.push_back(Row{stage, wall_ms, cpu_ms, 1});
  }
};

inline Table& table() {
  static Table t;
  return t;
}

// This thread's CPU time: on a busy machine it varies far less than wall time.
inline double thread_cpu_ms() {
#ifdef CLOCK_THREAD_CPUTIME_ID
  timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0) return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
#endif
  return static_cast<double>(std::clock()) * 1e3 / CLOCKS_PER_SEC;
}

}  // namespace stage_times_detail

class StageTimer {
 public:
  // `stage` must outlive the timer.
  explicit StageTimer(const char* stage)
      : stage_(stage_times_detail::table().on ? stage : nullptr) {
    if (!stage_) return;
    wall_ = std::chrono::steady_clock::now();
    cpu_ = stage_times_detail::thread_cpu_ms();
  }
  ~StageTimer() {
    if (!stage_) return;
    const std::chrono::duration<double, std::milli> wall = std::chrono::steady_clock::now() - wall_;
    stage_times_detail::table().add(stage_, wall.count(),
                                    stage_times_detail::thread_cpu_ms() - cpu_);
  }
  StageTimer(const StageTimer&) = delete;
  StageTimer& operator=(const StageTimer&) = delete;

 private:
  const char* stage_;
  std::chrono::steady_clock::time_point wall_;
  double cpu_ = 0;
};

}  // namespace ferrite
