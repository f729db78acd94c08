// Plans whose result depends on the order a backend visits the iteration space: no backend
// is wrong on them, the plan is. The differential oracle (differential.h) does not compare
// their values; whether validate_plan should refuse them is a finding of its own (the
// reproducers regressions/extern_reads_own_output.fplan and the V* lines of
// known_findings.tsv). Two kinds, both outside the Kernel contract (compiler/plan/kernel.h):
//  - memory read and written by one step other than in place: a kernel input arg and output
//    arg on overlapping bytes, unless the kernel has no reduction dims and every Load of the
//    input uses, before any Store of the output, the one index of every such Store, and that
//    index is one-to-one over the loop; an extern input overlapping one of its outputs; two
//    outputs of a step overlapping;
//  - a kernel Store that writes one element from two iteration points (found by evaluating
//    its index at every point; indices through loaded values are taken as one-to-one).
// Compiled plans have neither: fuzz_mutator_check checks that on every seed plan.
#pragma once

#include <string>

#include "compiler/plan/plan.h"

namespace ferrite::fuzz {

// "" for a plan with a defined result, else what makes it order-dependent. Meant for plans
// that passed validate_plan; iteration spaces over 2^22 points are not enumerated.
std::string order_dependence(const Plan& plan);

}  // namespace ferrite::fuzz
