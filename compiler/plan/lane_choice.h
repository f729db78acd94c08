// Where a reduction kernel's vector lanes go, for the backends that vectorize kernels (the
// portable block interpreter and the JIT): along the innermost reduction dim (lanes inner:
// each row reduced within the vector) or along the innermost outer dim (lanes outer: one
// output per lane, the reduction a loop of vector adds). Both backends take this choice;
// each then keeps to it or, where its own rules cannot run it (the portable interpreter's
// store hazards, an access the JIT does not emit), takes the other.
#pragma once

#include <cstdint>

#include "compiler/plan/kernel.h"

namespace ferrite {

// Lanes outer when more loads are contiguous along the outer dim and it fills a vector, or
// when the reduction is too short to fill one (< 16) and the outer dim is not; never when
// the reduction is long (>= 64) and at least as many loads are contiguous along it.
inline bool lanes_outer_pays(int64_t reduce_range, int64_t outer_range, int contiguous_reduce,
                             int contiguous_outer) {
  if (reduce_range >= 64 && contiguous_reduce >= contiguous_outer) return false;
  return (contiguous_outer > contiguous_reduce && outer_range >= 8) ||
         (reduce_range < 16 && outer_range >= 16);
}

// The rule above for a reduction kernel after merge_loop_dims (loop_dims.h), counting the
// loads (of any phase) whose index walks the innermost reduction dim, or the innermost outer
// dim, with stride 1. False for a kernel without reduction or outer dims.
bool prefer_lanes_outer(const Kernel& merged);

}  // namespace ferrite
