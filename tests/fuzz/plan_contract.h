// The compiler's side of the Plan contract, checked on every plan a fuzz target compiles:
// validate_plan accepts it (the runtime would refuse a plan the compiler made otherwise),
// its result does not depend on the order of evaluation (plan_hazards.h), and it survives
// serialization (plan_io.h) unchanged. A violation is printed and aborts.
#pragma once

#include "compiler/plan/plan.h"

namespace ferrite::fuzz {

void check_compiled_plan(const Plan& plan);

// For a plan that was read from bytes: written and read again it gives the same bytes as
// written the first time (the format's round trip is exact).
void check_round_trip(const Plan& plan);

}  // namespace ferrite::fuzz
