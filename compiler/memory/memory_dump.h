// The memory plan as FERRITE_DUMP writes it: 70_plan_memory.txt (every Temp buffer with its
// bytes, live range, offset and in-place partner, then the live bytes per step) and
// 70_plan_memory.svg (a timeline: x = step, y = pool offset, one rectangle per buffer with a
// tooltip, the live-bytes curve, and the lower-bound and pool lines).
#pragma once

#include <string>

#include "compiler/memory/live_ranges.h"
#include "compiler/plan/plan.h"

namespace ferrite {

// `m` is plan_temp_memory(plan); offsets and the pool size are read from `plan` itself
// (what the runtime will use).
std::string memory_to_text(const Plan& plan, const TempMemory& m);
std::string memory_to_svg(const Plan& plan, const TempMemory& m);

// "kernel k3_Relu_..." or "extern Conv (Conv '/conv1/Conv')": what step `s` runs.
std::string step_label(const Plan& plan, int s);

}  // namespace ferrite
