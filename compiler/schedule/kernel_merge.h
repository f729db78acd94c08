// Kernel merging: the code generation half of fusion (Inductor fuses SchedulerNodes and
// then emits one loop nest for the group; Ferrite merges the already-traced SSA bodies).
//
// Two kernels merge when their iteration spaces line up (size-1 dims ignored):
//   pointwise + pointwise over the same space            one loop
//   pointwise over a reduction's whole space              an inner loop of the reduction
//   pointwise over a reduction's outer space              the reduction's post phase
//   reduction + reduction over the same outer and inner   inner loops, in dependency order
// A value the second kernel loads from a buffer the first one stores at the same index is
// taken straight from the first kernel's SSA value when both sit in the same phase. From
// a later inner loop, a reduction's post value is recomputed from its Reduce results, and
// a per-point value of an earlier loop is recomputed when cheap or else re-loaded (the
// earlier loop stored it for this outer point). Everything else is refused with a reason.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/loopir/buffer.h"
#include "compiler/plan/kernel.h"

namespace ferrite {

// A kernel whose args are bound to buffers (kernel arg i reads/writes args[i]).
// A symbolic compile's kernel also has its loop ranges over the symbols (kernel.ranges are
// their hints; its indices may hold Sym leaves): two such kernels merge when their ranges
// are the same expressions.
struct BoundKernel {
  Kernel kernel;
  std::vector<Buffer*> args;
  std::optional<std::vector<Index>> sym_ranges;
};

// Merges `second` into `first` (first runs before second in program order; second may read
// what first writes, never the other way round). Returns "" and sets *out on success, or
// the reason the two cannot share one loop nest.
std::string merge_kernels(const BoundKernel& first, const BoundKernel& second, BoundKernel* out);

// The kernel without its stores to `internal` buffers (written and read only inside it),
// without the instructions nothing needs any more, and without args it no longer touches.
BoundKernel finalize_kernel(const BoundKernel& k, const std::set<Buffer*>& internal);

}  // namespace ferrite
