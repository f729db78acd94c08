// A pool of worker threads for builds without OpenMP that have threads: the wasm build with
// pthreads (ferrite_mt_wasm, for pages that are cross-origin isolated). parallel.h uses it
// there; native builds use OpenMP. Each part runs on exactly one thread, so results never
// depend on the thread count or on which thread took which part.
#pragma once

#include <cstdint>
#include <functional>

namespace ferrite {

// The most threads run_parts uses (the caller included): the machine's cores, at most 8
// (the wasm build preloads that many workers, and a browser's main thread must not wait
// for a new one to start).
int pool_max_threads();

// Runs f(part) for every part in [0, parts) on up to `threads` threads, the calling thread
// among them, and returns when all are done. Calls from several threads at once take turns;
// a call from inside a part runs serially. f must not throw.
void run_parts(int threads, int64_t parts, const std::function<void(int64_t)>& f);

}  // namespace ferrite
