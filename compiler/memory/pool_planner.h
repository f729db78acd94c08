// Memory planning: every temporary buffer gets an offset in one pool, from the live range
// of the buffer (first step that writes it .. last step that reads it). Buffers whose live
// ranges do not overlap may share bytes.
#pragma once

#include <cstdint>
#include <vector>

namespace ferrite {

struct LiveBuffer {
  int64_t bytes = 0;
  int first = 0;  // first step index using the buffer (inclusive)
  int last = 0;   // last step index using the buffer (inclusive)
};

struct PoolPlan {
  std::vector<int64_t> offsets;  // one per LiveBuffer, multiples of kPoolAlignment
  int64_t pool_bytes = 0;
  int64_t lower_bound = 0;  // max over steps of the bytes live at that step
};

constexpr int64_t kPoolAlignment = 64;

// `bytes` rounded up to kPoolAlignment: what a buffer takes in the pool. Throws
// ferrite::Error when that overflows.
int64_t pool_aligned(int64_t bytes);

// The greedy placement (pool_planner.cc) looks at every pair of buffers live together;
// past this many pairs (thousands of buffers live at once, as in a concatenation of many
// values) the buffers are placed in step order instead, in O(n log n).
constexpr int64_t kMaxConflictPairs = int64_t{1} << 20;

PoolPlan plan_pool(const std::vector<LiveBuffer>& buffers,
                   int64_t max_conflict_pairs = kMaxConflictPairs);

}  // namespace ferrite
