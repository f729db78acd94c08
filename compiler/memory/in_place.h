// In-place reuse: a pointwise kernel step whose output O may overwrite an input I that dies
// at that step (Inductor's buffer reuse, "inplace" in its memory planner). O then takes I's
// bytes: the pair is merged into one live range before the pool planner places it, so the
// runtime sees nothing special, only two buffers at one offset. The rule the backends must
// respect for this is part of the Kernel contract (compiler/plan/kernel.h, "Aliasing").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/memory/pool_planner.h"
#include "compiler/plan/plan.h"

namespace ferrite {

struct InPlacePair {
  int32_t step = -1;    // the kernel step where `input` dies and `output` is born
  int32_t input = -1;   // plan buffer ids
  int32_t output = -1;  // takes the bytes of `input`
};

// Why `output` may not take the bytes of `input` at `step`, or "" when it may. `ranges` are
// the live ranges of all plan buffers (by id, as live_ranges gives them). Legal only when:
//  - both are Temp buffers of the same byte size and the same element size;
//  - `input`'s last use and `output`'s first use are `step`, a Kernel step without guards;
//  - the kernel has no reduction dims; every arg bound to `input` is an input arg, and
//    `output` is bound to exactly one arg, an output;
//  - every Load of `input`'s args uses the same index expression (structurally) as every
//    Store of `output`'s arg, that index is affine and one-to-one over the iteration space
//    (so no other point's store can reach an element a point loads), and every such Load
//    comes before every such Store in code order.
std::string in_place_refusal(const Plan& plan, const std::vector<LiveBuffer>& ranges, int step,
                             int32_t input, int32_t output);

// The pairs to merge, in step order: for each output of each kernel step, the first input
// arg that is legal (in_place_refusal is ""). A buffer is the input of at most one pair and
// the output of at most one pair; chains (I -> O at one step, O -> O2 at a later one) are
// allowed and end up sharing one offset.
std::vector<InPlacePair> find_in_place_pairs(const Plan& plan,
                                             const std::vector<LiveBuffer>& ranges);

}  // namespace ferrite
