// The run targets' oracle: one plan and one input on every backend, the reference one (the
// scalar interpreter) first, then the others compared with it. A backend may refuse a plan
// at load (a kernel it cannot compile) with a ferrite::Error; once two backends loaded it,
// both must run it, or both fail, and their outputs must agree: same dtypes and shapes,
// integers and bools exactly, floats within a tolerance relative to the output's scale
// (vector math and summation order differ), NaN where the reference has NaN (any payload),
// infinities equal. A disagreement is printed and aborts, so libFuzzer keeps the input.
// A plan whose result depends on the order of evaluation (plan_hazards.h) has nothing to
// compare: it is run, not compared. FERRITE_FUZZ_DIFF=0 turns the comparison off (runs
// still happen, crashes still count); FERRITE_FUZZ_DIFF=strict also reports every
// order-dependent plan that validate_plan accepted.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "compiler/plan/plan.h"
#include "runtime/tensor.h"

namespace ferrite::fuzz {

// "" when `got` agrees with `ref`, else the first difference. In a plan that sums float32
// products in an extern, where the reference's double sums part from what float32 can give
// (an overflow), any infinity or NaN agrees (differential.cc, compare_one); `inputs` are
// the plan's, for their magnitudes.
std::string compare_outputs(const std::vector<Tensor>& ref, const std::vector<Tensor>& got,
                            const Plan& plan, const std::vector<Tensor>& inputs);

// Loads and runs `plan` with `inputs` on every backend of the build and compares them.
// `unfused`, when given, makes the same computation with a kernel per intermediate (the
// model compiled without fusion): before reporting a disagreement the oracle moves the
// reference's every step result by 2^-20 (jittered_reference.h), which reaches the
// intermediates a fused kernel keeps in registers only in that form.
void run_on_every_backend(const Plan& plan, const std::vector<Tensor>& inputs,
                          const std::function<Plan()>& unfused = {});

}  // namespace ferrite::fuzz
