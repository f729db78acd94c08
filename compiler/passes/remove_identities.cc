#include "compiler/passes/remove_identities.h"

#include <unordered_set>

namespace ferrite {
namespace {

bool is_identity(const Node& n) {
  if (n.op_type == "Identity") return n.inputs.size() == 1 && n.inputs[0] && n.outputs.size() == 1;
  // Dropout at inference is the identity on output 0; its mask output must be unused.
  if (n.op_type == "Dropout") {
    bool training = n.inputs.size() > 2 && n.inputs[2] != nullptr;
    return !training && n.inputs.size() >= 1 && n.inputs[0] &&
           (n.outputs.size() < 2 || !n.outputs[1] || n.outputs[1]->users.empty());
  }
  return false;
}

}  // namespace

void remove_identities(Graph& g) {
  g.rebuild_uses();
  const std::unordered_set<const Value*> outputs(g.outputs.begin(), g.outputs.end());
  for (const auto& n : g.nodes) {
    if (!is_identity(*n)) continue;
    Value* in = n->inputs[0];
    Value* out = n->outputs[0];
    // Graph outputs stay produced by a node so that their names survive.
    if (outputs.count(out)) continue;
    // The readers of `out` read `in` instead; they join in's users, so that an identity
    // producing `in` later in the list rewires them too.
    for (Node* user : out->users) {
      for (Value*& v : user->inputs) {
        if (v == out) v = in;
      }
      in->users.push_back(user);
    }
    out->users.clear();
  }
  g.rebuild_uses();
  g.remove_dead();
}

}  // namespace ferrite
