// The ONNX mutations: each picks one place of its kind in the decoded model and changes it
// the way a hostile or careless exporter would. onnx_mutator.cc picks among them by weight.
#include <algorithm>
#include <cstring>

#include "tests/fuzz/onnx_mutations.h"

namespace ferrite::fuzz {
namespace {

using namespace field;  // NOLINT: the field numbers read better unqualified

std::vector<ProtoMessage*> with_field(const std::vector<ProtoMessage*>& v, uint32_t number) {
  std::vector<ProtoMessage*> out;
  for (ProtoMessage* m : v) {
    if (m->count(number)) out.push_back(m);
  }
  return out;
}

// One edit of an int list: an element to an interesting value, one added or removed, the
// list emptied, doubled or reversed.
void mutate_int_list(Rng& rng, std::vector<int64_t>* v) {
  switch (rng.below(6)) {
    case 0:
      if (!v->empty()) {
        int64_t& x = (*v)[rng.below(v->size())];
        x = rng.chance(50) ? rng.near(x) : rng.interesting_int();
        return;
      }
      [[fallthrough]];
    case 1:
      v->insert(v->begin() + static_cast<long>(rng.below(v->size() + 1)), rng.interesting_int());
      return;
    case 2:
      if (!v->empty()) v->erase(v->begin() + static_cast<long>(rng.below(v->size())));
      return;
    case 3:
      v->clear();
      return;
    case 4:
      v->insert(v->end(), v->begin(), v->end());
      return;
    default:
      std::reverse(v->begin(), v->end());
  }
}

bool attr_int(MutationContext& c) {
  ProtoMessage* a = pick_or_null(c.rng, with_field(c.sites.attributes, kAttrI));
  if (!a) return false;
  ProtoField* f = a->first(kAttrI);
  const auto old = static_cast<int64_t>(f->scalar);
  f->wire = WireType::Varint;
  f->scalar = static_cast<uint64_t>(c.rng.chance(40) ? c.rng.near(old) : c.rng.interesting_int());
  return true;
}

bool attr_ints(MutationContext& c) {
  ProtoMessage* a = pick_or_null(c.rng, with_field(c.sites.attributes, kAttrInts));
  if (!a) return false;
  std::vector<int64_t> v = get_ints(*a, kAttrInts);
  mutate_int_list(c.rng, &v);
  set_ints(*a, kAttrInts, v);
  return true;
}

bool attr_float(MutationContext& c) {
  ProtoMessage* a = pick_or_null(c.rng, c.sites.attributes);
  if (!a) return false;
  if (ProtoField* f = a->first(kAttrF); f && f->wire == WireType::I32) {
    const float v = c.rng.interesting_float();
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    f->scalar = bits;
    return true;
  }
  ProtoField* fs = a->first(kAttrFloats);
  if (!fs || fs->wire != WireType::Len || fs->message) return false;
  std::vector<float> v = decode_floats(fs->bytes);
  if (v.empty() || c.rng.chance(20)) {
    v.push_back(c.rng.interesting_float());
  } else {
    v[c.rng.below(v.size())] = c.rng.interesting_float();
  }
  fs->bytes = encode_floats(v);
  return true;
}

bool attr_string(MutationContext& c) {
  ProtoMessage* a = pick_or_null(c.rng, with_field(c.sites.attributes, kAttrS));
  if (!a) return false;
  a->first(kAttrS)->bytes = c.rng.interesting_string(onnx_attribute_strings());
  return true;
}

// The declared type number changed, or the value moved to another field (an int given as a
// list, a float as an int, ...), so that type and payload disagree.
bool attr_type(MutationContext& c) {
  ProtoMessage* a = pick_or_null(c.rng, c.sites.attributes);
  if (!a) return false;
  if (c.rng.chance(50)) {
    a->set_varint(kAttrType, static_cast<uint64_t>(c.rng.range(0, 15)));
    return true;
  }
  if (ProtoField* i = a->first(kAttrI)) {
    const auto v = static_cast<int64_t>(i->scalar);
    a->remove_all(kAttrI);
    set_ints(*a, kAttrInts, {v});
    a->set_varint(kAttrType, kInts);
  } else if (a->count(kAttrInts)) {
    std::vector<int64_t> v = get_ints(*a, kAttrInts);
    a->remove_all(kAttrInts);
    a->set_varint(kAttrI, static_cast<uint64_t>(v.empty() ? 0 : v[0]));
    a->set_varint(kAttrType, kInt);
  } else {
    a->remove_all(kAttrF);
    a->set_varint(kAttrI, static_cast<uint64_t>(c.rng.interesting_int()));
    a->set_varint(kAttrType, kInt);
  }
  return true;
}

ProtoMessage new_attribute(Rng& rng, const std::string& name) {
  ProtoMessage a;
  a.type = Msg::Attribute;
  a.set_string(kAttrName, name);
  switch (rng.below(5)) {
    case 0: {
      std::vector<int64_t> v(rng.below(5));
      for (int64_t& x : v) x = rng.interesting_int();
      set_ints(a, kAttrInts, v);
      a.set_varint(kAttrType, kInts);
      break;
    }
    case 1: {
      ProtoField f = ProtoField::varint(kAttrF, 0);
      f.wire = WireType::I32;
      const float v = rng.interesting_float();
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      f.scalar = bits;
      a.fields.push_back(f);
      a.set_varint(kAttrType, kFloat);
      break;
    }
    case 2:
      a.set_string(kAttrS, rng.interesting_string(onnx_attribute_strings()));
      a.set_varint(kAttrType, kString);
      break;
    default:
      a.set_varint(kAttrI, static_cast<uint64_t>(rng.interesting_int()));
      a.set_varint(kAttrType, kInt);
  }
  return a;
}

bool add_attribute(MutationContext& c) {
  ProtoMessage* n = pick_or_null(c.rng, c.sites.nodes);
  if (!n) return false;
  std::string name = c.rng.pick(onnx_attribute_names());
  // Sometimes a name the node already has: a duplicate attribute.
  if (ProtoField* same = n->first(kNodeAttribute); same && same->message && c.rng.chance(20)) {
    name = same->message->string_of(kAttrName);
  }
  n->fields.push_back(ProtoField::nested(kNodeAttribute, new_attribute(c.rng, name)));
  return true;
}

bool drop_attribute(MutationContext& c) {
  ProtoMessage* n = pick_or_null(c.rng, with_field(c.sites.nodes, kNodeAttribute));
  if (!n) return false;
  std::vector<size_t> at;
  for (size_t i = 0; i < n->fields.size(); ++i) {
    if (n->fields[i].number == kNodeAttribute) at.push_back(i);
  }
  n->fields.erase(n->fields.begin() + static_cast<long>(at[c.rng.below(at.size())]));
  return true;
}

bool tensor_dims(MutationContext& c) {
  ProtoMessage* t = pick_or_null(c.rng, c.sites.tensors);
  if (!t) return false;
  std::vector<int64_t> dims = get_ints(*t, kTensorDims);
  mutate_int_list(c.rng, &dims);
  set_ints(*t, kTensorDims, dims);
  return true;
}

bool tensor_dtype(MutationContext& c) {
  ProtoMessage* t = pick_or_null(c.rng, c.sites.tensors);
  if (!t) return false;
  t->set_varint(kTensorDataType, static_cast<uint64_t>(c.rng.pick(onnx_elem_types())));
  return true;
}

// The tensor's contents: raw bytes through the byte mutator, or a typed value set to an
// interesting one.
bool tensor_data(MutationContext& c) {
  ProtoMessage* t = pick_or_null(c.rng, c.sites.tensors);
  if (!t) return false;
  if (ProtoField* raw = t->first(kTensorRawData); raw && !raw->message) {
    std::string& b = raw->bytes;
    const size_t size = b.size();
    b.resize(size + 64);
    b.resize(c.bytes(reinterpret_cast<uint8_t*>(&b[0]), size, b.size()));
    return true;
  }
  if (ProtoField* ints = t->first(kTensorInt64Data); ints && ints->wire == WireType::Len) {
    std::vector<int64_t> v = get_ints(*t, kTensorInt64Data);
    mutate_int_list(c.rng, &v);
    set_ints(*t, kTensorInt64Data, v);
    return true;
  }
  if (ProtoField* fs = t->first(kTensorFloatData); fs && fs->wire == WireType::Len) {
    std::vector<float> v = decode_floats(fs->bytes);
    if (v.empty()) return false;
    v[c.rng.below(v.size())] = c.rng.interesting_float();
    fs->bytes = encode_floats(v);
    return true;
  }
  return false;
}

// A dim of a declared shape: another value, symbolic, removed, or one more.
bool value_dim(MutationContext& c) {
  ProtoMessage* s = pick_or_null(c.rng, c.sites.shapes);
  if (!s) return false;
  std::vector<size_t> at;
  for (size_t i = 0; i < s->fields.size(); ++i) {
    if (s->fields[i].number == kShapeDim) at.push_back(i);
  }
  const size_t kind = c.rng.below(at.empty() ? 1 : 5);
  if (kind == 0) {  // one more dim
    ProtoMessage d;
    d.type = Msg::Dim;
    d.set_varint(kDimValue, static_cast<uint64_t>(c.rng.range(0, 4)));
    s->fields.push_back(ProtoField::nested(kShapeDim, d));
    return true;
  }
  const size_t i = at[c.rng.below(at.size())];
  if (kind == 1) {
    s->fields.erase(s->fields.begin() + static_cast<long>(i));
    return true;
  }
  ProtoField& f = s->fields[i];
  if (!f.message) return false;
  ProtoMessage& d = *f.message;
  d.remove_all(kDimValue);
  d.remove_all(kDimParam);
  if (kind == 2) {
    d.set_string(kDimParam, c.rng.chance(50) ? "N" : c.rng.interesting_string({"batch", "seq"}));
  } else {
    d.set_varint(kDimValue, static_cast<uint64_t>(c.rng.chance(60) ? c.rng.range(0, 4)
                                                                   : c.rng.interesting_int()));
  }
  return true;
}

// A declared element type changed, or the shape (rank unknown) or the type dropped.
bool value_type(MutationContext& c) {
  ProtoMessage* t = pick_or_null(c.rng, c.sites.tensor_types);
  if (!t) return false;
  switch (c.rng.below(4)) {
    case 0:
      t->remove_all(kTypeTensorShape);
      return true;
    case 1:
      t->remove_all(kTypeTensorElem);
      return true;
    default:
      t->set_varint(kTypeTensorElem, static_cast<uint64_t>(c.rng.pick(onnx_elem_types())));
      return true;
  }
}

}  // namespace

// Continued in onnx_mutations_graph.cc: node, graph, function and opset mutations.
std::vector<WeightedMutation> graph_mutations();

const std::vector<WeightedMutation>& onnx_mutations() {
  static const std::vector<WeightedMutation> kAll = [] {
    std::vector<WeightedMutation> v = {{"attr_int", attr_int, 10},
                                       {"attr_ints", attr_ints, 10},
                                       {"attr_float", attr_float, 4},
                                       {"attr_string", attr_string, 3},
                                       {"attr_type", attr_type, 3},
                                       {"add_attribute", add_attribute, 4},
                                       {"drop_attribute", drop_attribute, 3},
                                       {"tensor_dims", tensor_dims, 4},
                                       {"tensor_dtype", tensor_dtype, 3},
                                       {"tensor_data", tensor_data, 4},
                                       {"value_dim", value_dim, 8},
                                       {"value_type", value_type, 4}};
    for (const WeightedMutation& m : graph_mutations()) v.push_back(m);
    return v;
  }();
  return kAll;
}

}  // namespace ferrite::fuzz
