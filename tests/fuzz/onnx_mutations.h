// The ONNX mutator's parts (onnx_mutator.h): where in a decoded model each kind of message
// sits, and the mutations, each a function that edits one place and says whether it found
// one to edit. Internal to tests/fuzz.
#pragma once

#include <string>
#include <vector>

#include "tests/fuzz/fuzz_rng.h"
#include "tests/fuzz/onnx_mutator.h"
#include "tests/fuzz/proto_tree.h"

namespace ferrite::fuzz {

// Pointers into one decoded model, collected in one walk; any edit that adds or removes
// fields invalidates them (collect again).
struct OnnxSites {
  std::vector<ProtoMessage*> graphs, nodes, attributes, tensors, value_infos, tensor_types, shapes,
      dims, opsets, functions;
  std::vector<ProtoMessage*> node_owners;  // graphs and functions: the holders of nodes
  std::vector<std::string> names;          // every value name seen (inputs, outputs, ...)
  std::vector<ProtoField*> varints;        // every varint field, for the schema-free edit
};
OnnxSites collect_sites(ProtoMessage& model);

struct MutationContext {
  Rng& rng;
  ProtoMessage& model;
  OnnxSites sites;
  ByteMutator bytes;
};

using Mutation = bool (*)(MutationContext&);
// Each mutation with its weight (how often it is tried, relative to the others).
struct WeightedMutation {
  const char* name;
  Mutation apply;
  int weight;
};
const std::vector<WeightedMutation>& onnx_mutations();

// One of `v` at random, or null when it is empty.
template <class T>
T* pick_or_null(Rng& rng, const std::vector<T*>& v) {
  return v.empty() ? nullptr : v[rng.below(v.size())];
}

// The node holder (graph field 1 or function field 7) of a graph or function message.
uint32_t node_field_of(const ProtoMessage& owner);

}  // namespace ferrite::fuzz
