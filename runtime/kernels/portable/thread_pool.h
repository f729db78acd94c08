// The worker pool behind the parallel loops of the portable externs and of the JIT's kernels
// (parallel.h, jit_backend.cc), natively and in the wasm build with pthreads. A job is a
// number of parts that the calling thread and the workers claim one at a time from a shared
// counter, so a worker that is late — descheduled on a busy machine — costs nothing but the
// part it may hold: the others, the caller among them, take the rest, and nobody waits for
// a worker that has not started. Idle workers poll briefly, then sleep. Each part runs on
// exactly one thread, so results never depend on the thread count or on which thread took
// which part.
#pragma once

#include <cstdint>

namespace ferrite {

// The most threads run_parts uses (the caller included): the machine's cores; in wasm at
// most 8 (the build preloads that many workers, and a browser's main thread must not wait
// for a new one to start).
int pool_max_threads();

// A part's function: f(context, part).
using PartFn = void (*)(const void* context, int64_t part);

// Runs f(part) for every part in [0, parts) on up to `threads` threads, the calling thread
// among them, and returns when all are done. A call made while another thread's job runs,
// or from inside a part, runs its parts serially on its own thread. When parts throw,
// every part still runs and the exception of the lowest-numbered failing part is rethrown.
void run_parts(int threads, int64_t parts, PartFn f, const void* context);
template <class F>
void run_parts(int threads, int64_t parts, const F& f) {
  run_parts(
      threads, parts, [](const void* c, int64_t p) { (*static_cast<const F*>(c))(p); }, &f);
}

// Sends the workers that are polling for the next job to sleep now: before work on other
// threads (oneDNN's OpenMP team) whose cores they would otherwise take.
void pool_rest();

}  // namespace ferrite
