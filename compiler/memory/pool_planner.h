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

PoolPlan plan_pool(const std::vector<LiveBuffer>& buffers);

}  // namespace ferrite
