// Sequences and optionals (graph.h's Container) are values the engine holds, never a plan:
// their ops lower to NeedsCutError, so that a graph holding one inline (an If branch, a Loop
// body) runs that node at run time, where the engine runs them (bindings/engine/
// sequence_ops.h). A graph whose own nodes read or make one is cut there at load.
#include "compiler/graph/graph_cut.h"
#include "compiler/lower/lowering.h"
#include "compiler/plan/error.h"

namespace ferrite {

void register_sequence_ops(LoweringTable& t) {
  for (const std::string& op : sequence_ops()) {
    t.add(op, [](LowerCtx& c) -> std::vector<TensorBoxPtr> {
      throw NeedsCutError(
          str_cat(c.node.describe(), ": sequences and optionals run in the engine"));
    });
  }
}

}  // namespace ferrite
