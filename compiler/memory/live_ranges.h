// Live ranges of buffers over the steps of a plan: a buffer is live from the first step
// that touches it to the last (both inclusive). These feed the pool planner
// (pool_planner.h); assign_pool_offsets does both for the Temp buffers of a Plan.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/memory/pool_planner.h"
#include "compiler/plan/plan.h"

namespace ferrite {

// The buffers one step reads and writes (ids into the caller's buffer list).
struct StepUses {
  std::vector<int32_t> reads;
  std::vector<int32_t> writes;
};

// One LiveBuffer per entry of `bytes`. A buffer no step touches gets [0, 0], so it still
// gets bytes of its own (a dead buffer is the compiler's to remove, not the planner's).
// Throws ferrite::Error for a buffer id out of range.
std::vector<LiveBuffer> live_ranges(const std::vector<int64_t>& bytes,
                                    const std::vector<StepUses>& steps);

// What each step of `plan` reads and writes: kernel args by their `output` flag, extern
// inputs and outputs by their TensorRefs (and any ids the step lists, as reads).
std::vector<StepUses> plan_step_uses(const Plan& plan);

// Gives every Temp buffer of `plan` a pool offset from its live range and sets
// plan->pool_bytes. Returns the pool plan (offsets per Temp buffer, in buffer order).
PoolPlan assign_pool_offsets(Plan* plan);

}  // namespace ferrite
