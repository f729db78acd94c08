// An extern's epilogue as a following kernel: the Kernel (kernel.h) that applies the call's
// epilogue body (epilogue.h) in place to the elements of its result's view, loading each
// operand through its own view. It is how a backend whose library takes only chains of
// post-ops (oneDNN) or whose tiles take only those (the portable GEMM) runs any other body:
// the op without its epilogue, then this kernel, compiled like every other kernel.
//
// Args: 0 is y (an input), 1..n the operands the body loads (EpilogueKernel::inputs says
// which of the call's inputs), n + 1 the result (an output). Args 0 and n + 1 are bound to
// the same bytes: every Load of y uses the index of the one Store, before it (kernel.h's
// in-place rule). The loop nest is the view's shape; an arg's `elements` is the extent of
// its view (the largest element it reaches, plus one).
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/plan/kernel.h"
#include "compiler/plan/plan.h"

namespace ferrite {

struct EpilogueKernel {
  Kernel kernel;
  std::vector<int32_t> inputs;  // arg 1 + i is call.inputs[inputs[i]]
};

// For a call whose epilogue validates (validate_plan) and whose views reach only
// non-negative elements. A view with an empty dim gives a kernel of no points.
EpilogueKernel epilogue_kernel(const ExternCall& call);

// The elements a view reaches: its largest element index plus one (0 when it has none).
int64_t view_extent(const TensorRef& r);

}  // namespace ferrite
