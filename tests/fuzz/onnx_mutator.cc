// The ONNX mutator's driver: decode, apply one to three weighted mutations, encode; and the
// cross-over, which grafts a part of one model into another.
#include "tests/fuzz/onnx_mutator.h"

#include <cstring>

#include "tests/fuzz/onnx_mutations.h"

namespace ferrite::fuzz {
namespace {

using namespace field;  // NOLINT: the field numbers read better unqualified

void add_name(OnnxSites* s, const std::string& name) {
  if (!name.empty()) s->names.push_back(name);
}

void collect(ProtoMessage& m, OnnxSites* s) {
  switch (m.type) {
    case Msg::Graph:
      s->graphs.push_back(&m);
      s->node_owners.push_back(&m);
      break;
    case Msg::Function:
      s->functions.push_back(&m);
      s->node_owners.push_back(&m);
      break;
    case Msg::Node:
      s->nodes.push_back(&m);
      for (const ProtoField& f : m.fields) {
        if ((f.number == kNodeInput || f.number == kNodeOutput) && !f.message) add_name(s, f.bytes);
      }
      break;
    case Msg::Attribute:
      s->attributes.push_back(&m);
      break;
    case Msg::Tensor:
      s->tensors.push_back(&m);
      add_name(s, m.string_of(kTensorName));
      break;
    case Msg::ValueInfo:
      s->value_infos.push_back(&m);
      add_name(s, m.string_of(kValueInfoName));
      break;
    case Msg::TypeTensor:
      s->tensor_types.push_back(&m);
      break;
    case Msg::Shape:
      s->shapes.push_back(&m);
      break;
    case Msg::Dim:
      s->dims.push_back(&m);
      break;
    case Msg::OpsetId:
      s->opsets.push_back(&m);
      break;
    default:
      break;
  }
  for (ProtoField& f : m.fields) {
    if (f.message) collect(*f.message, s);
    if (f.wire == WireType::Varint) s->varints.push_back(&f);
  }
}

const WeightedMutation& pick_mutation(Rng& rng) {
  const std::vector<WeightedMutation>& all = onnx_mutations();
  int total = 0;
  for (const WeightedMutation& m : all) total += m.weight;
  int x = static_cast<int>(rng.below(static_cast<size_t>(total)));
  for (const WeightedMutation& m : all) {
    if (x < m.weight) return m;
    x -= m.weight;
  }
  return all.back();
}

size_t emit(const std::string& bytes, uint8_t* out, size_t max_size) {
  if (bytes.empty() || bytes.size() > max_size) return 0;
  std::memcpy(out, bytes.data(), bytes.size());
  return bytes.size();
}

// Model b's parts grafted into a: a node into one of a's graphs, an attribute into a node,
// a tensor's contents under a's name, a declared type, or a subgraph.
bool graft(Rng& rng, ProtoMessage& a, ProtoMessage& b) {
  OnnxSites sa = collect_sites(a), sb = collect_sites(b);
  auto pick = [&rng](const std::vector<ProtoMessage*>& v) {
    return v.empty() ? nullptr : v[rng.below(v.size())];
  };
  switch (rng.below(4)) {
    case 0: {
      ProtoMessage *to = pick(sa.node_owners), *node = pick(sb.nodes);
      if (!to || !node) return false;
      to->fields.push_back(ProtoField::nested(node_field_of(*to), *node));
      return true;
    }
    case 1: {
      ProtoMessage *to = pick(sa.nodes), *attr = pick(sb.attributes);
      if (!to || !attr) return false;
      to->fields.push_back(ProtoField::nested(kNodeAttribute, *attr));
      return true;
    }
    case 2: {
      ProtoMessage *to = pick(sa.tensors), *from = pick(sb.tensors);
      if (!to || !from) return false;
      const std::string name = to->string_of(kTensorName);
      *to = *from;
      to->set_string(kTensorName, name);
      return true;
    }
    default: {
      ProtoMessage *to = pick(sa.tensor_types), *from = pick(sb.tensor_types);
      if (!to || !from) return false;
      *to = *from;
      return true;
    }
  }
}

}  // namespace

OnnxSites collect_sites(ProtoMessage& model) {
  OnnxSites s;
  collect(model, &s);
  return s;
}

size_t mutate_onnx(uint8_t* data, size_t size, size_t max_size, unsigned seed, ByteMutator bytes) {
  Rng rng(seed);
  ProtoMessage model;
  if (rng.chance(10) || !parse_proto(data, size, Msg::Model, &model)) {
    return bytes(data, size, max_size);
  }
  const int edits = rng.chance(70) ? 1 : static_cast<int>(rng.range(2, 3));
  for (int done = 0, tries = 0; done < edits && tries < 20; ++tries) {
    MutationContext c{rng, model, collect_sites(model), bytes};
    done += pick_mutation(rng).apply(c);
  }
  const size_t n = emit(serialize_proto(model), data, max_size);
  return n ? n : bytes(data, size, max_size);
}

size_t cross_over_onnx(const uint8_t* a, size_t a_size, const uint8_t* b, size_t b_size,
                       uint8_t* out, size_t max_out, unsigned seed) {
  Rng rng(seed);
  ProtoMessage ma, mb;
  if (parse_proto(a, a_size, Msg::Model, &ma) && parse_proto(b, b_size, Msg::Model, &mb)) {
    for (int tries = 0; tries < 4; ++tries) {
      if (graft(rng, ma, mb)) return emit(serialize_proto(ma), out, max_out);
    }
  }
  // Not both models: a's head and b's tail.
  const size_t head = a_size ? rng.below(a_size + 1) : 0, tail = b_size ? rng.below(b_size) : 0;
  const size_t n = std::min(max_out, head + (b_size - tail));
  std::memcpy(out, a, std::min(head, n));
  if (n > head) std::memcpy(out + head, b + tail, n - head);
  return n;
}

}  // namespace ferrite::fuzz
