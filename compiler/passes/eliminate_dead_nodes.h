// Removes nodes whose outputs no graph output depends on (Inductor's dead-node pass).
#pragma once

#include "compiler/graph/graph.h"

namespace ferrite {

void eliminate_dead_nodes(Graph& g);

}  // namespace ferrite
