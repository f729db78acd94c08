// The tensor graph: what the frontend produces and the graph passes rewrite.
// A Graph owns its Nodes and Values. A Value is produced by at most one Node (none for
// graph inputs and constants); its `data` holds the contents of initializers and folded
// constants. Shapes use -1 for dimensions unknown until the input shapes are bound
// (`dim_names` keeps the symbolic name, e.g. "N"). Nodes are kept in topological order
// after topo_sort(), which the frontend runs because real models ship unsorted nodes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/plan/aligned_bytes.h"
#include "compiler/plan/dtype.h"

namespace ferrite {

// ONNX's non-tensor types the engine holds (never a plan): a sequence of tensors, an
// optional tensor or sequence. A value of these has TensorType's dtype (and shape, where
// declared) of its tensors, and `container` saying what holds them.
enum class Container : uint8_t { Tensor, Sequence, Optional, OptionalSequence };

struct TensorType {
  DType dtype = DType::Undefined;
  std::vector<int64_t> shape;          // -1: unknown or symbolic
  std::vector<std::string> dim_names;  // symbolic names ("" for static dims); may be empty
  bool rank_known = true;
  Container container = Container::Tensor;

  bool is_static() const;
  int64_t elements() const;  // -1 if not static
  std::string to_string() const;
};

// Contents of a constant tensor, stored little-endian and densely (row-major).
struct TensorData {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  ConstantBytes bytes;  // shared by reference: see aligned_bytes.h
  // A string tensor's elements (DType::String, no bytes), shared by reference. No plan
  // holds strings: the engine's string ops read them (graph_cut.h's runs_on_strings).
  std::shared_ptr<const std::vector<std::string>> strings;

  int64_t elements() const;
  template <class T>
  const T* as() const {
    return reinterpret_cast<const T*>(bytes.data());
  }
  // Element i converted to int64 / double (any numeric dtype).
  int64_t int_at(int64_t i) const;
  double float_at(int64_t i) const;
  // The whole tensor as int64s (shape-like inputs: Reshape's shape, Slice's starts, ...).
  std::vector<int64_t> to_ints() const;
};

class Graph;
struct Node;

struct Value {
  std::string name;
  TensorType type;
  Node* producer = nullptr;
  int output_index = 0;
  std::vector<Node*> users;                // rebuilt by Graph::rebuild_uses()
  std::shared_ptr<const TensorData> data;  // non-null for constants

  bool is_constant() const { return data != nullptr; }
};

enum class AttrKind : uint8_t {
  Float,
  Int,
  String,
  Tensor,
  Graph,
  Floats,
  Ints,
  Strings,
  Tensors,
  Graphs,
  Type  // a TypeProto (Optional's `type`), as `type`
};

struct Attribute {
  AttrKind kind = AttrKind::Int;
  double f = 0;
  int64_t i = 0;
  std::string s;
  std::shared_ptr<const TensorData> t;
  std::shared_ptr<Graph> g;
  std::vector<double> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<std::shared_ptr<const TensorData>> tensors;
  std::vector<std::shared_ptr<Graph>> graphs;
  TensorType type;
};

struct Node {
  std::string op_type;
  std::string domain;  // "" for the default ONNX domain
  std::string name;
  std::vector<Value*> inputs;  // nullptr for an omitted optional input
  std::vector<Value*> outputs;
  std::map<std::string, Attribute> attrs;

  // nullptr when absent or omitted.
  Value* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  bool has_attr(const std::string& key) const { return attrs.count(key) != 0; }
  // Typed accessors; they throw ferrite::Error naming the node if the kind is wrong.
  int64_t attr_int(const std::string& key, int64_t dflt) const;
  double attr_float(const std::string& key, double dflt) const;
  std::string attr_string(const std::string& key, const std::string& dflt) const;
  std::vector<int64_t> attr_ints(const std::string& key, std::vector<int64_t> dflt = {}) const;
  std::vector<double> attr_floats(const std::string& key, std::vector<double> dflt = {}) const;
  std::shared_ptr<const TensorData> attr_tensor(const std::string& key) const;
  // "Relu 'relu_3'": how errors name a node.
  std::string describe() const;
};

class Graph {
 public:
  std::string name;
  std::vector<std::unique_ptr<Node>> nodes;
  std::vector<std::unique_ptr<Value>> values;
  std::vector<Value*> inputs;  // runtime inputs (initializers are constants, not inputs)
  std::vector<Value*> outputs;
  std::map<std::string, int64_t> opsets;  // domain -> version; "" is ai.onnx
  // Subgraphs (If/Loop/Scan bodies) only: values of enclosing graphs that this graph reads
  // by name. Each is a local Value with the outer value's name and type (and data when the
  // outer value is a constant); topo_sort/validate treat them as defined, and the parent's
  // topo_sort/remove_dead treat them as inputs of the node that owns the subgraph.
  std::vector<Value*> captures;

  int64_t opset(const std::string& domain = "") const;

  Value* find(const std::string& value_name) const;
  // Creates a fresh value; the name is made unique if taken ("" gives a generated name).
  Value* add_value(const std::string& value_name, TensorType type = {});
  Value* add_input(const std::string& value_name, TensorType type);
  Value* add_constant(const std::string& value_name, std::shared_ptr<const TensorData> data);
  Node* add_node(const std::string& op_type, std::vector<Value*> ins, std::vector<Value*> outs,
                 const std::string& node_name = "");
  void add_output(Value* v) { outputs.push_back(v); }

  // Recomputes every Value's producer and users from the node list.
  void rebuild_uses();
  // Orders nodes so producers come first. Throws on a cycle, on a value produced twice,
  // and on a node input that no node, input or constant defines.
  void topo_sort();
  // Checks names, producers and that every output is defined. Throws ferrite::Error.
  void validate() const;
  // Drops nodes whose outputs reach no graph output, and values no longer referenced.
  void remove_dead();

 private:
  std::map<std::string, Value*> by_name_;
  int next_id_ = 0;
};

std::string graph_to_string(const Graph& g);

// A small builder for tests and passes:
//   GraphBuilder b; Value* x = b.input("x", DType::F32, {2, 3});
//   Value* y = b.op("Relu", {x}); b.output(y); std::unique_ptr<Graph> g = b.finish();
class GraphBuilder {
 public:
  GraphBuilder();
  Value* input(const std::string& name, DType dtype, std::vector<int64_t> shape);
  Value* constant(const std::string& name, DType dtype, std::vector<int64_t> shape,
                  const void* data);
  Value* constant_f32(std::vector<int64_t> shape, std::vector<float> values);
  Value* constant_i64(std::vector<int64_t> shape, std::vector<int64_t> values);
  // A node with `num_outputs` fresh outputs; returns the first.
  Value* op(const std::string& op_type, std::vector<Value*> ins,
            std::map<std::string, Attribute> attrs = {}, int num_outputs = 1);
  Node* last_node() const { return last_; }
  void output(Value* v) { g_->add_output(v); }
  std::unique_ptr<Graph> finish();

 private:
  std::unique_ptr<Graph> g_;
  Node* last_ = nullptr;
};

Attribute attr_i(int64_t v);
Attribute attr_f(double v);
Attribute attr_s(std::string v);
Attribute attr_is(std::vector<int64_t> v);
Attribute attr_fs(std::vector<double> v);

}  // namespace ferrite
