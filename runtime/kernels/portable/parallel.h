// Threads of the portable externs: the worker pool of thread_pool.h (native, and the wasm
// build with pthreads), none in the plain wasm build.
// Work is split into parts fixed by the caller, each computed by exactly one thread, so a
// result never depends on the thread count.
#pragma once

#include <algorithm>
#include <cstdint>

#include "runtime/kernels/portable/thread_pool.h"

namespace ferrite {

// Runs f(part) for every part in [0, parts), on up to `threads` threads (run_parts: an
// exception from a part reaches the caller after every part ran).
template <class F>
void parallel_parts(int threads, int64_t parts, const F& f) {
#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
  if (threads > 1 && parts > 1) {
    run_parts(threads, parts, f);
    return;
  }
#endif
  (void)threads;
  for (int64_t p = 0; p < parts; ++p) f(p);
}

// Runs f(begin, end) over [0, count) cut into up to `threads` contiguous ranges (the split
// depends on the thread count, so f must compute each index the same way in any range).
template <class F>
void parallel_ranges(int threads, int64_t count, const F& f) {
  const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(threads, count));
  parallel_parts(threads, parts, [&](int64_t p) { f(count * p / parts, count * (p + 1) / parts); });
}

}  // namespace ferrite
