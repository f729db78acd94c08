// TensorType and TensorData helpers, Node attribute accessors, and the Graph's value/node
// bookkeeping (naming, creation, use lists). Sorting and checking live in graph_sort.cc.
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>

#include "compiler/graph/graph.h"
#include "compiler/plan/error.h"
#include "compiler/plan/minifloat.h"
#include "compiler/plan/scalar_ops.h"

namespace ferrite {

namespace {

// Product of dims; -1 if any dim is negative. Overflow is an error, not a wrap.
int64_t checked_product(const std::vector<int64_t>& dims, const char* what) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return -1;
    if (__builtin_mul_overflow(n, d, &n)) fail(what, ": element count overflows int64");
  }
  return n;
}

std::string join_dims(const std::vector<int64_t>& shape, const std::vector<std::string>& names) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    if (i < names.size() && !names[i].empty()) {
      s += names[i];
    } else if (shape[i] < 0) {
      s += "?";
    } else {
      s += std::to_string(shape[i]);
    }
  }
  return s + "]";
}

template <class T>
T load(const TensorData& t, int64_t i) {
  T v;
  std::memcpy(&v, t.bytes.data() + static_cast<size_t>(i) * sizeof(T), sizeof(T));
  return v;
}

// Every element access goes through this bound check, which uses the bytes actually held
// (not the shape) so a tensor whose shape and bytes disagree still cannot be over-read.
void check_element(const TensorData& t, int64_t i) {
  size_t size = dtype_size(t.dtype);
  if (size == 0) fail("tensor of dtype ", dtype_name(t.dtype), " has no numeric elements");
  if (i < 0 || static_cast<uint64_t>(i) >= t.bytes.size() / size) {
    fail("tensor element ", i, " is out of range (", t.bytes.size() / size, " elements)");
  }
}

// Float to int64 without UB: NaN gives 0, out-of-range values saturate.
int64_t saturate_to_int(double d) {
  if (std::isnan(d)) return 0;
  if (d >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
  if (d < -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(d);
}

const char* attr_kind_name(AttrKind k) {
  static constexpr const char* kNames[] = {"float",   "int",    "string", "tensor",
                                           "graph",   "floats", "ints",   "strings",
                                           "tensors", "graphs"};  // enumerator order
  const size_t i = static_cast<size_t>(k);
  return i < std::size(kNames) ? kNames[i] : "?";
}

// The attribute `key` if present with kind `want`; nullptr if absent; throws on a wrong kind.
const Attribute* typed_attr(const Node& n, const std::string& key, AttrKind want) {
  auto it = n.attrs.find(key);
  if (it == n.attrs.end()) return nullptr;
  if (it->second.kind != want) {
    fail("node ", n.describe(), ": attribute '", key, "' is ", attr_kind_name(it->second.kind),
         ", expected ", attr_kind_name(want));
  }
  return &it->second;
}

}  // namespace

// ---- TensorType ----------------------------------------------------------------------------

bool TensorType::is_static() const {
  if (!rank_known) return false;
  for (int64_t d : shape) {
    if (d < 0) return false;
  }
  return true;
}

int64_t TensorType::elements() const {
  if (!is_static()) return -1;
  return checked_product(shape, "tensor type");
}

std::string TensorType::to_string() const {
  std::string s = dtype_name(dtype);
  s += rank_known ? join_dims(shape, dim_names) : "[*]";
  switch (container) {
    case Container::Tensor:
      return s;
    case Container::Sequence:
      return "sequence<" + s + ">";
    case Container::Optional:
      return "optional<" + s + ">";
    case Container::OptionalSequence:
      return "optional<sequence<" + s + ">>";
  }
  return s;
}

// ---- TensorData ----------------------------------------------------------------------------

int64_t TensorData::elements() const {
  int64_t n = checked_product(shape, "tensor data");
  if (n < 0) fail("tensor data has a negative dimension in ", join_dims(shape, {}));
  return n;
}

int64_t TensorData::int_at(int64_t i) const {
  check_element(*this, i);
  switch (dtype) {
    case DType::U8:
      return load<uint8_t>(*this, i);
    case DType::I8:
      return load<int8_t>(*this, i);
    case DType::U16:
      return load<uint16_t>(*this, i);
    case DType::I16:
      return load<int16_t>(*this, i);
    case DType::I32:
      return load<int32_t>(*this, i);
    case DType::I64:
      return load<int64_t>(*this, i);
    case DType::U32:
      return load<uint32_t>(*this, i);
    case DType::U64:
      return static_cast<int64_t>(load<uint64_t>(*this, i));  // wraps as a cast
    case DType::Bool:
      return load<uint8_t>(*this, i) != 0;
    case DType::U4:
    case DType::U2:
      return load<uint8_t>(*this, i);
    case DType::I4:
    case DType::I2:
      return load<int8_t>(*this, i);
    default:
      return saturate_to_int(float_at(i));
  }
}

double TensorData::float_at(int64_t i) const {
  check_element(*this, i);
  switch (dtype) {
    case DType::F32:
      return load<float>(*this, i);
    case DType::F64:
      return load<double>(*this, i);
    case DType::F16:
      return half_to_float(load<uint16_t>(*this, i));
    case DType::BF16:
      return bfloat16_to_float(load<uint16_t>(*this, i));
    case DType::U64:
      return static_cast<double>(load<uint64_t>(*this, i));
    default:
      if (dtype_is_minifloat(dtype)) return minifloat_to_float(dtype, load<uint8_t>(*this, i));
      return static_cast<double>(int_at(i));
  }
}

std::vector<int64_t> TensorData::to_ints() const {
  int64_t n = elements();
  size_t size = dtype_size(dtype);
  if (size == 0 || static_cast<uint64_t>(n) > bytes.size() / size) {
    fail("tensor data of ", dtype_name(dtype), join_dims(shape, {}), " holds only ", bytes.size(),
         " bytes");
  }
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = int_at(i);
  return out;
}

// ---- Node ----------------------------------------------------------------------------------

int64_t Node::attr_int(const std::string& key, int64_t dflt) const {
  const Attribute* a = typed_attr(*this, key, AttrKind::Int);
  return a ? a->i : dflt;
}

double Node::attr_float(const std::string& key, double dflt) const {
  // An int where a float is expected is a lossless widening (hand-built graphs write 1 for 1.0).
  auto it = attrs.find(key);
  if (it != attrs.end() && it->second.kind == AttrKind::Int) {
    return static_cast<double>(it->second.i);
  }
  const Attribute* a = typed_attr(*this, key, AttrKind::Float);
  return a ? a->f : dflt;
}

std::string Node::attr_string(const std::string& key, const std::string& dflt) const {
  const Attribute* a = typed_attr(*this, key, AttrKind::String);
  return a ? a->s : dflt;
}

std::vector<int64_t> Node::attr_ints(const std::string& key, std::vector<int64_t> dflt) const {
  const Attribute* a = typed_attr(*this, key, AttrKind::Ints);
  return a ? a->ints : dflt;
}

std::vector<double> Node::attr_floats(const std::string& key, std::vector<double> dflt) const {
  const Attribute* a = typed_attr(*this, key, AttrKind::Floats);
  return a ? a->floats : dflt;
}

std::shared_ptr<const TensorData> Node::attr_tensor(const std::string& key) const {
  const Attribute* a = typed_attr(*this, key, AttrKind::Tensor);
  return a ? a->t : nullptr;
}

std::string Node::describe() const {
  std::string op = op_type.empty() ? "<no op>" : op_type;
  if (!name.empty()) return op + " '" + name + "'";
  // Unnamed nodes (most exported models) are best identified by what they produce: an
  // index would change with every pass that reorders nodes.
  if (!outputs.empty() && outputs[0]) return op + " (output '" + outputs[0]->name + "')";
  return op + " (unnamed)";
}

// ---- Graph ---------------------------------------------------------------------------------

int64_t Graph::opset(const std::string& domain) const {
  auto it = opsets.find(domain);
  return it == opsets.end() ? 0 : it->second;
}

Value* Graph::find(const std::string& value_name) const {
  auto it = by_name_.find(value_name);
  return it == by_name_.end() ? nullptr : it->second;
}

Value* Graph::add_value(const std::string& value_name, TensorType type) {
  std::string unique = value_name;
  if (unique.empty()) {
    do {
      unique = "_t" + std::to_string(next_id_++);
    } while (by_name_.count(unique));
  } else if (by_name_.count(unique)) {
    for (int k = 1;; ++k) {
      unique = value_name + "_" + std::to_string(k);
      if (!by_name_.count(unique)) break;
    }
  }
  auto v = std::make_unique<Value>();
  v->name = unique;
  v->type = std::move(type);
  Value* raw = v.get();
  values.push_back(std::move(v));
  by_name_[unique] = raw;
  return raw;
}

Value* Graph::add_input(const std::string& value_name, TensorType type) {
  Value* v = add_value(value_name, std::move(type));
  inputs.push_back(v);
  return v;
}

Value* Graph::add_constant(const std::string& value_name, std::shared_ptr<const TensorData> data) {
  if (!data) fail("add_constant '", value_name, "': no data");
  TensorType type;
  type.dtype = data->dtype;
  type.shape = data->shape;
  Value* v = add_value(value_name, std::move(type));
  v->data = std::move(data);
  return v;
}

Node* Graph::add_node(const std::string& op_type, std::vector<Value*> ins, std::vector<Value*> outs,
                      const std::string& node_name) {
  auto node = std::make_unique<Node>();
  node->op_type = op_type;
  node->name = node_name;
  node->inputs = std::move(ins);
  node->outputs = std::move(outs);
  Node* raw = node.get();
  for (size_t k = 0; k < raw->outputs.size(); ++k) {
    if (!raw->outputs[k]) fail("add_node ", raw->describe(), ": output ", k, " is null");
    raw->outputs[k]->producer = raw;
    raw->outputs[k]->output_index = static_cast<int>(k);
  }
  for (Value* in : raw->inputs) {
    if (in && (in->users.empty() || in->users.back() != raw)) in->users.push_back(raw);
  }
  nodes.push_back(std::move(node));
  return raw;
}

void Graph::rebuild_uses() {
  by_name_.clear();
  for (auto& v : values) {
    v->producer = nullptr;
    v->output_index = 0;
    v->users.clear();
    by_name_.emplace(v->name, v.get());  // the first of two same-named values wins
  }
  for (auto& n : nodes) {
    for (Value* in : n->inputs) {
      if (in && (in->users.empty() || in->users.back() != n.get())) in->users.push_back(n.get());
    }
    for (size_t k = 0; k < n->outputs.size(); ++k) {
      if (!n->outputs[k]) continue;
      n->outputs[k]->producer = n.get();
      n->outputs[k]->output_index = static_cast<int>(k);
    }
  }
}

}  // namespace ferrite
