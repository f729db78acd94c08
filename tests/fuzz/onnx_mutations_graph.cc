// The ONNX mutations of a graph's wiring: node inputs and outputs, op types, node order,
// subgraphs, functions, opset imports, graph inputs/outputs/initializers, and any varint.
#include <algorithm>

#include "tests/fuzz/onnx_mutations.h"

namespace ferrite::fuzz {
namespace {

using namespace field;  // NOLINT: the field numbers read better unqualified

// Positions in m.fields of the fields numbered `number`.
std::vector<size_t> positions(const ProtoMessage& m, uint32_t number) {
  std::vector<size_t> at;
  for (size_t i = 0; i < m.fields.size(); ++i) {
    if (m.fields[i].number == number) at.push_back(i);
  }
  return at;
}

std::string some_name(MutationContext& c) {
  if (c.sites.names.empty() || c.rng.chance(10)) return c.rng.chance(50) ? "" : "fuzz_undefined";
  return c.rng.pick(c.sites.names);
}

// An input of a node names another value: one from anywhere in the model (maybe a later
// node's output, a cycle, a value of another subgraph), "" (an optional input left out) or
// one nothing defines.
bool rewire_input(MutationContext& c) {
  ProtoMessage* n = pick_or_null(c.rng, c.sites.nodes);
  if (!n) return false;
  std::vector<size_t> at = positions(*n, kNodeInput);
  if (at.empty()) return false;
  n->fields[at[c.rng.below(at.size())]].bytes = some_name(c);
  return true;
}

// Inputs or outputs of a node dropped, duplicated, swapped, or an output renamed.
bool node_io(MutationContext& c) {
  ProtoMessage* n = pick_or_null(c.rng, c.sites.nodes);
  if (!n) return false;
  const uint32_t which = c.rng.chance(70) ? kNodeInput : kNodeOutput;
  std::vector<size_t> at = positions(*n, which);
  switch (c.rng.below(4)) {
    case 0:
      if (at.empty()) return false;
      n->fields.erase(n->fields.begin() + static_cast<long>(at[c.rng.below(at.size())]));
      return true;
    case 1:
      if (at.empty()) return false;
      n->fields.push_back(n->fields[at[c.rng.below(at.size())]]);
      return true;
    case 2:
      if (at.size() < 2) return false;
      std::swap(n->fields[at[c.rng.below(at.size())]].bytes,
                n->fields[at[c.rng.below(at.size())]].bytes);
      return true;
    default:
      n->fields.push_back(ProtoField::len(which, some_name(c)));
      return true;
  }
}

bool op_type(MutationContext& c) {
  ProtoMessage* n = pick_or_null(c.rng, c.sites.nodes);
  if (!n) return false;
  if (c.rng.chance(10)) {
    static const std::vector<std::string> kDomains = {"", "ai.onnx", "ai.onnx.ml", "com.microsoft",
                                                      "local"};
    n->set_string(kNodeDomain, c.rng.pick(kDomains));
    return true;
  }
  n->set_string(kNodeOpType, c.rng.interesting_string(onnx_op_types()));
  return true;
}

// Node order and count in a graph or function: a node duplicated (two producers of one
// value), deleted, or two swapped (a use before its definition).
bool node_order(MutationContext& c) {
  ProtoMessage* g = pick_or_null(c.rng, c.sites.node_owners);
  if (!g) return false;
  std::vector<size_t> at = positions(*g, node_field_of(*g));
  if (at.empty()) return false;
  const size_t i = at[c.rng.below(at.size())], j = at[c.rng.below(at.size())];
  switch (c.rng.below(3)) {
    case 0:
      g->fields.insert(g->fields.begin() + static_cast<long>(i) + 1, g->fields[i]);
      return true;
    case 1:
      g->fields.erase(g->fields.begin() + static_cast<long>(i));
      return true;
    default:
      std::swap(g->fields[i], g->fields[j]);
      return true;
  }
}

// A subgraph attribute (If's branches, Loop's and Scan's bodies) given another graph of the
// model (the main one included: outer-scope names then resolve differently), or emptied.
bool subgraph(MutationContext& c) {
  std::vector<ProtoMessage*> holders;
  for (ProtoMessage* a : c.sites.attributes) {
    ProtoField* g = a->first(kAttrG);
    if (g && g->message) holders.push_back(a);
  }
  ProtoMessage* a = pick_or_null(c.rng, holders);
  if (!a) return false;
  ProtoField* g = a->first(kAttrG);
  if (c.rng.chance(20)) {
    g->message->fields.clear();
    return true;
  }
  ProtoMessage* other = pick_or_null(c.rng, c.sites.graphs);
  if (other == g->message.get()) return false;
  ProtoMessage copy = *other;  // before the assignment: `other` may contain `g`
  *g->message = std::move(copy);
  return true;
}

// Model-local functions: a node made a call of one, or a function's signature changed.
bool function(MutationContext& c) {
  ProtoMessage* f = pick_or_null(c.rng, c.sites.functions);
  if (!f) return false;
  if (c.rng.chance(50)) {
    ProtoMessage* n = pick_or_null(c.rng, c.sites.nodes);
    if (!n) return false;
    n->set_string(kNodeOpType, f->string_of(kFunctionName));
    n->set_string(kNodeDomain, f->string_of(kFunctionDomain));
    return true;
  }
  static const uint32_t kLists[] = {kFunctionInput, kFunctionOutput, kFunctionAttribute};
  const uint32_t which = kLists[c.rng.below(3)];
  std::vector<size_t> at = positions(*f, which);
  if (!at.empty() && c.rng.chance(50)) {
    f->fields.erase(f->fields.begin() + static_cast<long>(at[c.rng.below(at.size())]));
  } else {
    f->fields.push_back(ProtoField::len(which, some_name(c)));
  }
  return true;
}

// The opset of a domain (what decides an op's semantics and inputs), or the IR version.
bool opset(MutationContext& c) {
  if (c.rng.chance(15)) {
    c.model.set_varint(kModelIrVersion, static_cast<uint64_t>(c.rng.range(0, 12)));
    return true;
  }
  ProtoMessage* o = pick_or_null(c.rng, c.sites.opsets);
  if (!o) return false;
  switch (c.rng.below(5)) {
    case 0:
      o->set_string(kOpsetDomain, c.rng.chance(50) ? "ai.onnx" : "com.microsoft");
      return true;
    case 1:
      o->set_varint(kOpsetVersion, static_cast<uint64_t>(c.rng.interesting_int()));
      return true;
    default:
      o->set_varint(kOpsetVersion, static_cast<uint64_t>(c.rng.range(1, 25)));
      return true;
  }
}

// A graph's interface: an input, output or initializer removed or duplicated, an
// initializer also declared as an input (with or without a type), or an input made an
// initializer of the same name.
bool graph_io(MutationContext& c) {
  ProtoMessage* g = pick_or_null(c.rng, c.sites.graphs);
  if (!g) return false;
  static const uint32_t kLists[] = {kGraphInput, kGraphOutput, kGraphInitializer};
  const uint32_t which = kLists[c.rng.below(3)];
  std::vector<size_t> at = positions(*g, which);
  if (at.empty()) return false;
  const size_t i = at[c.rng.below(at.size())];
  switch (c.rng.below(4)) {
    case 0:
      g->fields.erase(g->fields.begin() + static_cast<long>(i));
      return true;
    case 1:
      g->fields.push_back(g->fields[i]);
      return true;
    default: {
      if (!g->fields[i].message) return false;
      ProtoMessage from = *g->fields[i].message;
      if (which == kGraphInitializer) {  // declared as an input too, untyped
        ProtoMessage vi;
        vi.type = Msg::ValueInfo;
        vi.set_string(kValueInfoName, from.string_of(kTensorName));
        g->fields.push_back(ProtoField::nested(kGraphInput, vi));
      } else {  // a scalar float initializer of the same name
        ProtoMessage t;
        t.type = Msg::Tensor;
        t.set_varint(kTensorDataType, 1);
        t.set_string(kTensorName, from.string_of(kValueInfoName));
        t.set_string(kTensorRawData, std::string(4, '\0'));
        g->fields.push_back(ProtoField::nested(kGraphInitializer, t));
      }
      return true;
    }
  }
}

// Any varint anywhere (enum values, flags, counts the schema above does not single out).
bool any_varint(MutationContext& c) {
  ProtoField* f = pick_or_null(c.rng, c.sites.varints);
  if (!f) return false;
  f->scalar = static_cast<uint64_t>(c.rng.chance(50) ? c.rng.near(static_cast<int64_t>(f->scalar))
                                                     : c.rng.interesting_int());
  return true;
}

}  // namespace

uint32_t node_field_of(const ProtoMessage& owner) {
  return owner.type == Msg::Function ? kFunctionNode : kGraphNode;
}

std::vector<WeightedMutation> graph_mutations() {
  return {{"rewire_input", rewire_input, 8},
          {"node_io", node_io, 5},
          {"op_type", op_type, 4},
          {"node_order", node_order, 4},
          {"subgraph", subgraph, 2},
          {"function", function, 2},
          {"opset", opset, 3},
          {"graph_io", graph_io, 4},
          {"any_varint", any_varint, 5}};
}

}  // namespace ferrite::fuzz
