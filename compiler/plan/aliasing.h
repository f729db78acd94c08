// The Kernel contract's one exception to "args are distinct memory" (kernel.h, Aliasing):
// an output arg may take the bytes of input args (in-place reuse) when every point reads
// exactly the elements it then overwrites. The memory planner asks it before it pairs two
// buffers (compiler/memory/in_place.h), and validate_plan before it accepts a plan whose
// kernel step binds overlapping memory to two args, so that a backend never meets another
// overlap.
#pragma once

#include <string>
#include <vector>

#include "compiler/plan/kernel.h"
#include "compiler/plan/plan.h"

namespace ferrite {

// Why the output arg `out_arg` of `k` may not write the bytes its input args `in_args` read
// from, or "" when it may: k has no reduction dims; in_args are input args and out_arg an
// output; every Load of in_args uses the same index expression (structurally) as every
// Store of out_arg, that index is affine and one-to-one over the iteration space, and every
// such Load comes before every such Store in code order.
std::string in_place_kernel_refusal(const Kernel& k, const std::vector<int>& in_args, int out_arg);

// Checks the memory step `s` of a plan (whose ids validate_plan checked) writes against the
// memory it reads: two args of a kernel step may share bytes only when both are read, or
// when an output takes exactly the bytes of input args under in_place_kernel_refusal's rule;
// an extern's outputs share no bytes with its other operands. Buffers share bytes when they
// are one buffer, or temps whose pool ranges meet. Near-linear in the step's operands.
// Throws ferrite::Error "plan: step S ...".
void check_step_overlaps(const Plan& p, size_t s);

// Checks that no Store of `k` (indexed without loaded values) writes one element from two
// points of its loops (all of them in the body, the outer ones in post): such a kernel's
// result depends on the order a backend visits its points. Proven by the mixed-radix test,
// else refuted by a coefficient of 0 or an unused loop variable, else by evaluating the
// index at every point when there are at most 2^20; larger unproven ones pass. Indirect
// stores (scatters) are the ops' own business. Throws "kernel '<name>': ...".
void check_store_collisions(const Kernel& k);

}  // namespace ferrite
