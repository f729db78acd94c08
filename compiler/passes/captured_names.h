// Shared by the fusing passes. Names of the values that subgraphs (If/Loop/Scan bodies) read from
// their enclosing graphs. Such a value has readers that Value::users does not list: passes that
// remove or rename values must leave them alone.
#pragma once

#include <set>
#include <string>

#include "compiler/graph/graph.h"

namespace ferrite {

std::set<std::string> captured_names(const Graph& g);

// Users bookkeeping while a pass absorbs nodes, in place of a rebuild_uses per match (which
// made a pass O(N^2) on a graph of N matches): forget_reader(u) drops u from the users of
// the values it reads (call it before clearing u's inputs), add_reader(v, n) lists n among
// v's users, as rebuild_uses would. Constants' users are left as they were: the passes read
// only produced values' users, and erase_absorbed_nodes rebuilds them all at the end.
void forget_reader(Node* u);
void add_reader(Value* v, Node* n);

// Erases `gone` (nodes a pass absorbed and emptied) from g.nodes and rebuilds the uses.
void erase_absorbed_nodes(Graph& g, const std::set<Node*>& gone);

}  // namespace ferrite
