// Plans whose result depends on the order a backend visits the iteration space: no backend
// is wrong on them, the plan is. validate_plan now refuses both kinds (compiler/plan/
// aliasing.h: check_step_overlaps, and check_store_collisions up to 2^20 points); this
// independent check, by enumeration, stays as the fuzz oracle's second opinion: the
// differential oracle (differential.h) does not compare the values of a plan it flags, and
// fuzz_mutator_check asserts that no compiled seed plan is flagged. Two kinds, both outside
// the Kernel contract (compiler/plan/kernel.h):
//  - memory read and written by one step other than in place: a kernel input arg and output
//    arg on overlapping bytes, unless the kernel has no reduction dims and every Load of the
//    input uses, before any Store of the output, the one index of every such Store, and that
//    index is one-to-one over the loop; an extern input overlapping one of its outputs; two
//    outputs of a step overlapping;
//  - a kernel Store that writes one element from two iteration points (found by evaluating
//    its index at every point; indices through loaded values are taken as one-to-one).
#pragma once

#include <string>

#include "compiler/plan/plan.h"

namespace ferrite::fuzz {

// "" for a plan with a defined result, else what makes it order-dependent. Meant for plans
// that passed validate_plan; iteration spaces over 2^22 points are not enumerated.
std::string order_dependence(const Plan& plan);

}  // namespace ferrite::fuzz
