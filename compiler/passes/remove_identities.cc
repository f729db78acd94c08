#include "compiler/passes/remove_identities.h"

#include <algorithm>

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
  for (const auto& n : g.nodes) {
    if (!is_identity(*n)) continue;
    Value* in = n->inputs[0];
    Value* out = n->outputs[0];
    // Graph outputs stay produced by a node so that their names survive.
    if (std::find(g.outputs.begin(), g.outputs.end(), out) != g.outputs.end()) continue;
    for (const auto& user : g.nodes) {
      for (Value*& v : user->inputs) {
        if (v == out) v = in;
      }
    }
  }
  g.rebuild_uses();
  g.remove_dead();
}

}  // namespace ferrite
