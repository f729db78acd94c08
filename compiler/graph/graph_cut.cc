#include "compiler/graph/graph_cut.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "compiler/plan/error.h"

namespace ferrite {
namespace {

// The names a node's subgraphs (and theirs) read from enclosing graphs.
void captured(const Node& n, std::set<std::string>* out) {
  for (const auto& kv : n.attrs) {
    std::vector<const Graph*> subs;
    if (kv.second.g) subs.push_back(kv.second.g.get());
    for (const auto& s : kv.second.graphs)
      if (s) subs.push_back(s.get());
    for (const Graph* s : subs) {
      for (const Value* v : s->captures)
        if (v) out->insert(v->name);
      for (const auto& inner : s->nodes) captured(*inner, out);
    }
  }
}

// Every value a node reads: its inputs and what its subgraphs capture (by name in `g`).
std::vector<const Value*> reads(const Graph& g, const Node& n) {
  std::vector<const Value*> out;
  for (const Value* v : n.inputs)
    if (v) out.push_back(v);
  std::set<std::string> names;
  captured(n, &names);
  for (const std::string& name : names)
    if (const Value* v = g.find(name)) out.push_back(v);
  return out;
}

// Builds a part of a graph: copies of `nodes` (in order), fed by inputs named as the values
// they read that `inside` does not produce (constants stay constants).
class PartBuilder {
 public:
  // `loose`: every input has no declared shape (a subgraph's inputs, whose declared
  // shapes a loop-carried value may outgrow).
  explicit PartBuilder(const Graph& g, bool loose = false)
      : g_(g), loose_(loose), part_(std::make_unique<Graph>()) {
    part_->name = g.name;
    part_->opsets = g.opsets;
  }

  // The model's inputs first, all of them and in order (a copy of the whole graph).
  void inputs_as_declared() {
    for (const Value* v : g_.inputs) value(v);
  }

  std::unique_ptr<Graph> build(const std::vector<const Node*>& nodes,
                               const std::vector<const Value*>& outputs) {
    for (const Node* n : nodes)
      for (const Value* v : n->outputs) produced_.insert(v);
    for (const Node* n : nodes) {
      for (const Value* v : reads(g_, *n)) value(v);  // captured values too, as inputs
      std::vector<Value*> ins, outs;
      for (const Value* v : n->inputs) ins.push_back(v ? value(v) : nullptr);
      for (const Value* v : n->outputs) outs.push_back(value(v));
      Node* copy = part_->add_node(n->op_type, std::move(ins), std::move(outs), n->name);
      copy->domain = n->domain;
      copy->attrs = n->attrs;  // subgraphs shared: compiling reads them only
    }
    for (const Value* v : outputs) part_->add_output(value(v));
    part_->rebuild_uses();
    return std::move(part_);
  }

 private:
  Value* value(const Value* v) {
    auto it = map_.find(v);
    if (it != map_.end()) return it->second;
    Value* copy = nullptr;
    if (v->is_constant()) {
      copy = part_->add_constant(v->name, v->data);
    } else if (produced_.count(v)) {
      copy = part_->add_value(v->name, v->type);
    } else if (!loose_ && std::find(g_.inputs.begin(), g_.inputs.end(), v) != g_.inputs.end()) {
      copy = part_->add_input(v->name, v->type);  // a model input, as declared
    } else {
      // A value computed before the cut: its shape (and maybe its type) is known only once
      // it is.
      TensorType any;
      any.dtype = v->type.dtype;
      any.rank_known = false;
      any.container = v->type.container;
      copy = part_->add_input(v->name, any);
    }
    if (copy->name != v->name) fail("graph cut: value name '", v->name, "' is not unique");
    map_[v] = copy;
    return copy;
  }

  const Graph& g_;
  bool loose_;
  std::unique_ptr<Graph> part_;
  std::unordered_set<const Value*> produced_;
  std::unordered_map<const Value*, Value*> map_;
};

}  // namespace

bool is_value_sized_op(const std::string& op_type, const std::string& domain) {
  return (domain.empty() || domain == "ai.onnx") &&
         (op_type == "NonZero" || op_type == "Compress" || op_type == "Unique" ||
          op_type == "NonMaxSuppression");
}

const std::vector<std::string>& sequence_ops() {
  static const std::vector<std::string> ops = {
      "SequenceEmpty", "SequenceConstruct",  "SequenceInsert",     "SequenceAt",
      "SequenceErase", "SequenceLength",     "ConcatFromSequence", "SplitToSequence",
      "Optional",      "OptionalHasElement", "OptionalGetElement", "SequenceMap"};
  return ops;
}

bool is_sequence_op(const std::string& op_type, const std::string& domain) {
  if (!domain.empty() && domain != "ai.onnx") return false;
  for (const std::string& op : sequence_ops())
    if (op == op_type) return true;
  return false;
}

bool is_string_op(const std::string& op_type, const std::string& domain) {
  return (domain.empty() || domain == "ai.onnx") &&
         (op_type == "StringConcat" || op_type == "StringSplit" || op_type == "StringNormalizer" ||
          op_type == "RegexFullMatch");
}

bool is_string_mover(const std::string& op_type, const std::string& domain) {
  static const std::set<std::string> kMovers = {
      "Identity", "Reshape",  "Flatten",        "Squeeze",         "Unsqueeze", "Transpose",
      "Gather",   "GatherND", "GatherElements", "Concat",          "Slice",     "Split",
      "Expand",   "Tile",     "Where",          "ReverseSequence", "Compress"};
  return (domain.empty() || domain == "ai.onnx") && kMovers.count(op_type);
}

bool runs_on_strings(const Graph& g, const Node& n) {
  if (is_string_op(n.op_type, n.domain)) return true;
  for (const Value* v : n.outputs)
    if (v && v->type.dtype == DType::String) return true;
  for (const Value* v : reads(g, n))
    if (v->type.dtype == DType::String) return true;
  return false;
}

namespace {

bool is_string(const Value* v) {
  return v && v->type.dtype == DType::String;
}

// Whether node `n` computes its outputs as strings (with the types its inputs have now).
bool makes_strings(const Node& n) {
  const bool plain = n.domain.empty() || n.domain == "ai.onnx";
  if (plain && (n.op_type == "StringConcat" || n.op_type == "StringNormalizer")) return true;
  if (plain && n.op_type == "Cast") return n.attr_int("to", 0) == 8;  // TensorProto.STRING
  if (plain && n.op_type == "CastLike") return n.inputs.size() > 1 && is_string(n.inputs[1]);
  if (n.domain == "ai.onnx.ml" && n.op_type == "LabelEncoder") {
    auto s = n.attrs.find("values_strings");
    auto t = n.attrs.find("values_tensor");
    return (s != n.attrs.end() && !s->second.strings.empty()) ||
           (t != n.attrs.end() && t->second.t && t->second.t->dtype == DType::String);
  }
  if (!is_string_mover(n.op_type, n.domain)) return false;
  if (n.op_type == "Where") {
    return (n.inputs.size() > 1 && is_string(n.inputs[1])) ||
           (n.inputs.size() > 2 && is_string(n.inputs[2]));
  }
  if (n.op_type == "Concat") {
    for (const Value* v : n.inputs)
      if (is_string(v)) return true;
    return false;
  }
  return !n.inputs.empty() && is_string(n.inputs[0]);
}

}  // namespace

void infer_string_types(Graph& g) {
  for (const auto& node : g.nodes) {
    for (const auto& kv : node->attrs) {
      if (kv.second.g) infer_string_types(*kv.second.g);
      for (const auto& sub : kv.second.graphs)
        if (sub) infer_string_types(*sub);
    }
    const bool strings = makes_strings(*node);
    // StringSplit's second output counts the substrings.
    const size_t outputs = node->op_type == "StringSplit" ? 1 : node->outputs.size();
    for (size_t k = 0; k < outputs && (strings || node->op_type == "StringSplit"); ++k) {
      Value* v = node->outputs[k];
      if (v && v->type.dtype == DType::Undefined) v->type.dtype = DType::String;
    }
  }
}

bool runs_in_engine(const Graph& g, const Node& n) {
  if (is_value_sized_op(n.op_type, n.domain) || is_sequence_op(n.op_type, n.domain) ||
      runs_on_strings(g, n))
    return true;
  for (const Value* v : n.outputs)
    if (v && v->type.container != Container::Tensor) return true;
  for (const Value* v : reads(g, n))
    if (v->type.container != Container::Tensor) return true;
  return false;
}

std::unique_ptr<GraphCut> cut_at_value_sized_node(const Graph& g) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (runs_in_engine(g, *g.nodes[i])) return cut_at_node(g, i);
  }
  return nullptr;
}

std::unique_ptr<GraphCut> cut_at_output(const Graph& g, const std::string& node_output) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = *g.nodes[i];
    if (!n.outputs.empty() && n.outputs[0] && n.outputs[0]->name == node_output) {
      // A graph of just that node, run as a graph of its own, would cut into itself; an If
      // or a Loop runs its subgraphs instead.
      const bool control =
          n.domain.empty() && (n.op_type == "If" || n.op_type == "Loop" || n.op_type == "Scan");
      if (g.nodes.size() == 1 && !control) return nullptr;
      return cut_at_node(g, i);
    }
  }
  return nullptr;
}

std::unique_ptr<Graph> copy_graph(const Graph& g) {
  PartBuilder b(g);
  b.inputs_as_declared();
  std::vector<const Node*> nodes;
  for (const auto& n : g.nodes) nodes.push_back(n.get());
  return b.build(nodes, std::vector<const Value*>(g.outputs.begin(), g.outputs.end()));
}

std::unique_ptr<Graph> standalone_subgraph(const Graph& body) {
  std::vector<const Node*> nodes;
  for (const auto& n : body.nodes) nodes.push_back(n.get());
  return PartBuilder(body, /*loose=*/true)
      .build(nodes, std::vector<const Value*>(body.outputs.begin(), body.outputs.end()));
}

std::unique_ptr<Graph> single_node_graph(const Graph& g, const Node& n) {
  std::vector<const Value*> outputs;
  for (const Value* v : n.outputs)
    if (v) outputs.push_back(v);
  return PartBuilder(g, /*loose=*/true).build({&n}, outputs);
}

std::unique_ptr<GraphCut> cut_at_node(const Graph& g, size_t at) {
  const Node& cut_node = *g.nodes[at];
  // The head: the node's ancestors. Nodes are sorted, so one backward sweep finds them.
  std::unordered_set<const Value*> needed;
  for (const Value* v : reads(g, cut_node)) needed.insert(v);
  std::vector<bool> in_head(g.nodes.size(), false);
  for (size_t i = at; i-- > 0;) {
    const Node& n = *g.nodes[i];
    bool wanted = false;
    for (const Value* v : n.outputs) wanted = wanted || needed.count(v) != 0;
    if (!wanted) continue;
    in_head[i] = true;
    for (const Value* v : reads(g, n)) needed.insert(v);
  }
  std::vector<const Node*> head_nodes, tail_nodes;
  std::unordered_set<const Value*> head_values;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (i == at) continue;
    (in_head[i] ? head_nodes : tail_nodes).push_back(g.nodes[i].get());
    if (in_head[i])
      for (const Value* v : g.nodes[i]->outputs) head_values.insert(v);
  }
  // What crosses the cut from the head: the node's inputs, and what the tail and the model
  // outputs read.
  std::vector<const Value*> head_outputs;
  std::unordered_set<const Value*> crossing;
  auto cross = [&](const Value* v) {
    if (v && head_values.count(v) && crossing.insert(v).second) head_outputs.push_back(v);
  };
  for (const Value* v : reads(g, cut_node)) cross(v);
  for (const Node* n : tail_nodes)
    for (const Value* v : reads(g, *n)) cross(v);
  for (const Value* v : g.outputs) cross(v);

  auto cut = std::make_unique<GraphCut>();
  if (!head_nodes.empty()) cut->head = PartBuilder(g).build(head_nodes, head_outputs);
  cut->node.op_type = cut_node.op_type;
  cut->node.domain = cut_node.domain;
  cut->node.name = cut_node.name;
  cut->node.attrs = cut_node.attrs;
  cut->described = cut_node.describe();
  cut->single = single_node_graph(g, cut_node);
  for (const Value* v : cut_node.inputs) {
    cut->node_inputs.push_back(v ? v->name : "");
    cut->node_constants.push_back(v && v->is_constant() ? v->data : nullptr);
  }
  for (const Value* v : cut_node.outputs) cut->node_outputs.push_back(v->name);
  std::unordered_set<const Value*> tail_values;
  for (const Node* n : tail_nodes)
    for (const Value* v : n->outputs) tail_values.insert(v);
  std::vector<const Value*> tail_outputs;
  for (const Value* v : g.outputs) {
    cut->outputs.push_back(v->name);
    if (v->is_constant()) cut->constant_outputs.emplace_back(v->name, v->data);
    if (tail_values.count(v)) tail_outputs.push_back(v);
  }
  if (!tail_outputs.empty()) cut->tail = PartBuilder(g).build(tail_nodes, tail_outputs);
  return cut;
}

}  // namespace ferrite
