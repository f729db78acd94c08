#include "compiler/passes/eliminate_dead_nodes.h"

namespace ferrite {

void eliminate_dead_nodes(Graph& g) {
  g.remove_dead();
}

}  // namespace ferrite
