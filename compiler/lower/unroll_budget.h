// The unrolling budget of one compile: Loop and Scan bodies and recurrent ops' steps are
// lowered once per iteration (plans have no run-time loops), so a trip count of 10^6, or a
// loop nested in another, would lower millions of nodes and take minutes or exhaust memory.
// Each unrolling lowering charges what it is about to lower, and past
// CompileOptions::max_unrolled_nodes (--max-unrolled-nodes, FERRITE_MAX_UNROLLED_NODES;
// resource_limits.h) the compile fails at once with a LimitError naming the node.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/lower/lowering.h"
#include "compiler/plan/resource_limits.h"

namespace ferrite {

// Past the budget. A Loop catches it and runs at run time instead (NeedsCutError); Scan and
// the recurrent ops report it.
class UnrollLimitError : public LimitError {
 public:
  explicit UnrollLimitError(const std::string& message) : LimitError(message) {}
};

// A Loop or Scan that would unroll more nodes than this (iterations times its
// body's nodes plus one) runs at run time instead, its body once per iteration
// (NeedsCutError): unrolling lets iterations fuse, but the compile grows faster than the
// node count (a Scan-8 over 1023 batch entries of 6 steps, 18414 nodes, unrolled to 14322
// kernels and took 12 s to fuse).
constexpr int64_t kUnrollAtMost = 1024;

// Whether `iterations` of `body` would unroll more than kUnrollAtMost nodes.
bool unrolls_too_much(const Graph& body, int64_t iterations);

// Charges `nodes` (at least 1) to c.gl's budget; `what` says what is being unrolled
// ("iteration 5000 of the loop").
void charge_unrolled(const LowerCtx& c, int64_t nodes, const std::string& what);

}  // namespace ferrite
