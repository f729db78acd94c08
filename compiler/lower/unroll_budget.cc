// The unrolling budget (unroll_budget.h).
#include "compiler/lower/unroll_budget.h"

#include <algorithm>

#include "compiler/plan/resource_limits.h"

namespace ferrite {

bool unrolls_too_much(const Graph& body, int64_t iterations) {
  const int64_t per = static_cast<int64_t>(body.nodes.size()) + 1;
  int64_t nodes;
  return __builtin_mul_overflow(iterations, per, &nodes) || nodes > kUnrollAtMost;
}

void charge_unrolled(const LowerCtx& c, int64_t nodes, const std::string& what) {
  GraphLowering& gl = c.gl;
  nodes = std::max<int64_t>(nodes, 1);
  if (nodes <= gl.max_unrolled_nodes - gl.unrolled_nodes) {
    gl.unrolled_nodes += nodes;
    return;
  }
  throw UnrollLimitError(str_cat(c.origin(), ": ", what, " would unroll more than ",
                                 gl.max_unrolled_nodes,
                                 " nodes (loops and recurrences are unrolled at compile time; "
                                 "raise the limit with --max-unrolled-nodes or "
                                 "FERRITE_MAX_UNROLLED_NODES)"));
}

}  // namespace ferrite
