#include "compiler/passes/captured_names.h"

#include <algorithm>
#include <memory>

namespace ferrite {
namespace {

void collect(const Graph& g, std::set<std::string>* out) {
  for (const auto& n : g.nodes)
    for (const auto& [key, a] : n->attrs) {
      std::vector<const Graph*> subs;
      if (a.g) subs.push_back(a.g.get());
      for (const auto& s : a.graphs)
        if (s) subs.push_back(s.get());
      for (const Graph* s : subs) {
        for (const Value* v : s->captures) out->insert(v->name);
        collect(*s, out);
      }
    }
}

}  // namespace

std::set<std::string> captured_names(const Graph& g) {
  std::set<std::string> names;
  collect(g, &names);
  return names;
}

void forget_reader(Node* u) {
  for (Value* x : u->inputs) {
    if (!x || x->is_constant()) continue;
    x->users.erase(std::remove(x->users.begin(), x->users.end(), u), x->users.end());
  }
}

void add_reader(Value* v, Node* n) {
  if (!v || v->is_constant()) return;
  if (std::find(v->users.begin(), v->users.end(), n) == v->users.end()) v->users.push_back(n);
}

void erase_absorbed_nodes(Graph& g, const std::set<Node*>& gone) {
  g.nodes.erase(std::remove_if(g.nodes.begin(), g.nodes.end(),
                               [&](const std::unique_ptr<Node>& p) { return gone.count(p.get()); }),
                g.nodes.end());
  g.rebuild_uses();
}

}  // namespace ferrite
