// Shared by the fusing passes. Names of the values that subgraphs (If/Loop/Scan bodies) read from
// their enclosing graphs. Such a value has readers that Value::users does not list: passes that
// remove or rename values must leave them alone.
#pragma once

#include <set>
#include <string>

#include "compiler/graph/graph.h"

namespace ferrite {

std::set<std::string> captured_names(const Graph& g);

// Erases `gone` (nodes a pass absorbed and emptied) from g.nodes and rebuilds the uses.
void erase_absorbed_nodes(Graph& g, const std::set<Node*>& gone);

}  // namespace ferrite
