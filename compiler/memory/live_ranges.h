// Live ranges of buffers over the steps of a plan: a buffer is live from the first step
// that touches it to the last (both inclusive). These feed the pool planner
// (pool_planner.h); plan_temp_memory does both for the Temp buffers of a Plan, after
// merging in-place pairs (in_place.h), and assign_pool_offsets writes the result into it.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/memory/in_place.h"
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

// The memory plan of a Plan's Temp buffers. With `in_place`, each in-place pair is merged
// into one live range (the union of the two) before the pool is planned, so that the pair
// gets one offset; pool.lower_bound is then the most aligned bytes live at one step with
// each merged group counted once.
struct TempMemory {
  std::vector<int32_t> temps;         // plan buffer ids of the Temp buffers, in id order
  std::vector<LiveBuffer> ranges;     // per temp: its own bytes (unaligned) and live range
  std::vector<InPlacePair> in_place;  // the merged pairs (empty without `in_place`)
  PoolPlan pool;                      // offsets per temp, pool_bytes, lower_bound
  std::vector<int64_t> live_bytes;    // per step: the aligned bytes live (a group once)
  int peak_step = -1;                 // the first step where lower_bound (> 0) bytes are live
};
TempMemory plan_temp_memory(const Plan& plan, bool in_place = true);

// Gives every Temp buffer of `plan` a pool offset (plan_temp_memory with in-place reuse)
// and sets plan->pool_bytes. Returns that memory plan (offsets per Temp buffer, in buffer
// order; live ranges and in-place pairs, for the dump).
TempMemory assign_pool_offsets(Plan* plan);

}  // namespace ferrite
