// ModelCompiler on the ONNX frontend and the compiler (full builds).
#include "bindings/engine/model_compiler.h"

#include <set>

#include "bindings/engine/regex_full_match.h"
#include "bindings/engine/sequence_ops.h"
#include "bindings/engine/string_ops.h"
#include "bindings/engine/value_sized_ops.h"
#include "compiler/frontend/onnx/onnx_import.h"
#include "compiler/graph/graph_cut.h"
#include "compiler/plan/error.h"
#include "compiler/plan/stage_times.h"

namespace ferrite {
namespace {

DeclaredIo declared(const Value& v) {
  DeclaredIo io;
  io.info.name = v.name;
  io.info.dtype = v.type.dtype;
  io.info.shape = v.type.shape;
  io.dim_names = v.type.dim_names;
  io.rank_known = v.type.rank_known;
  io.container = v.type.container;
  return io;
}

std::shared_ptr<const Tensor> tensor_of(const std::shared_ptr<const TensorData>& d) {
  if (!d) return nullptr;
  if (d->dtype == DType::String)
    return std::make_shared<const Tensor>(d->shape,
                                          d->strings ? *d->strings : std::vector<std::string>());
  return std::make_shared<const Tensor>(d->dtype, d->shape, d->bytes.data());
}

// A mover of strings (graph_cut.h's is_string_mover; the node of `single`, a graph of it
// alone) as a graph of its own that moves the positions of the elements instead: its inputs
// in0, in1, ... (int64 where the node reads strings; omitted optional inputs stay omitted),
// its outputs out0, out1, ...
std::shared_ptr<const Graph> positions_graph(const Graph& single) {
  const Node& n = *single.nodes[0];
  auto g = std::make_shared<Graph>();
  g->opsets = single.opsets;
  std::vector<Value*> ins, outs;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Value* v = n.inputs[i];
    if (!v) {
      ins.push_back(nullptr);
      continue;
    }
    TensorType t;
    t.dtype = v->type.dtype == DType::String ? DType::I64 : v->type.dtype;
    t.rank_known = false;
    ins.push_back(g->add_input(str_cat("in", i), t));
  }
  for (size_t k = 0; k < n.outputs.size(); ++k) outs.push_back(g->add_value(str_cat("out", k)));
  Node* copy = g->add_node(n.op_type, ins, outs, n.name);
  copy->domain = n.domain;
  copy->attrs = n.attrs;
  for (Value* v : outs) g->add_output(v);
  g->rebuild_uses();
  return g;
}

class GraphCompiler final : public ModelCompiler {
 public:
  GraphCompiler(std::unique_ptr<Graph> g, const CompileOptions& options)
      : graph_(std::move(g)), options_(options) {
    if (!graph_) fail("model import produced no graph");
    for (const Value* v : graph_->inputs) inputs_.push_back(declared(*v));
    for (const Value* v : graph_->outputs) outputs_.push_back(declared(*v));
    graph_->rebuild_uses();
    graph_->topo_sort();
    if (std::unique_ptr<GraphCut> cut = cut_at_value_sized_node(*graph_)) {
      make_cut(std::move(cut));
      graph_.reset();  // compiled in parts only
      return;
    }
    // The graph as imported, to cut where a compile asks to (NeedsCutError): the passes
    // change the graph; the parts run them again each. Constants and subgraphs are shared.
    pristine_ = copy_graph(*graph_);
    prepare_graph(*graph_, options_);
  }

  std::unique_ptr<ModelCut> take_cut() override { return std::move(cut_); }

  std::unique_ptr<ModelCut> cut_at(const std::string& node_output) override {
    if (!pristine_) return nullptr;
    std::unique_ptr<GraphCut> cut = cut_at_output(*pristine_, node_output);
    if (!cut) return nullptr;
    make_cut(std::move(cut));
    return std::move(cut_);
  }

  const std::vector<DeclaredIo>& inputs() const override { return inputs_; }
  const std::vector<DeclaredIo>& outputs() const override { return outputs_; }

  Plan compile(const std::vector<IoInfo>& types,
               const std::vector<const Tensor*>& values) override {
    if (!graph_) fail("this model runs in parts (cut at a value-sized node): no one plan");
    std::vector<TensorType> input_types(types.size());
    for (size_t i = 0; i < types.size(); ++i) {
      input_types[i].dtype = types[i].dtype;
      input_types[i].shape = types[i].shape;
    }
    std::vector<std::shared_ptr<const TensorData>> input_values(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      if (!values[i]) continue;
      auto data = std::make_shared<TensorData>();
      data->dtype = values[i]->dtype();
      data->shape = values[i]->shape();
      data->bytes.assign(values[i]->data(), values[i]->data() + values[i]->nbytes());
      input_values[i] = std::move(data);
    }
    bool any_value = false;
    for (const Tensor* v : values) any_value = any_value || v;
    Plan plan;
    if (!any_value && instantiate(input_types, &plan)) return plan;
    plan = compile_graph(*graph_, input_types, options_, input_values);
    ++plans_made_;
    return plan;
  }

  int64_t plans_made() const override { return plans_made_; }
  std::string symbolic_status() const override {
    if (symbolic_ == Symbolic::Yes && symbolic_plans_.size() == 1)
      return "compiled once for every shape";
    if (symbolic_ == Symbolic::Yes)
      return str_cat("compiled once per pattern of dims fed 0 or 1 (", symbolic_plans_.size(),
                     " plans)");
    if (symbolic_ == Symbolic::No && !not_symbolic_.empty())
      return "compiled per shape (" + not_symbolic_ + ")";
    return "";
  }

 private:
  void make_cut(std::unique_ptr<GraphCut> cut) {
    cut_ = std::make_unique<ModelCut>();
    if (cut->head) cut_->head = std::make_unique<GraphCompiler>(std::move(cut->head), options_);
    if (cut->tail) cut_->tail = std::make_unique<GraphCompiler>(std::move(cut->tail), options_);
    cut_->node = cut->described;
    const Node& n = cut->node;
    auto standalone = [this](std::shared_ptr<const Graph> body) {
      return [body, options = options_]() -> std::unique_ptr<ModelCompiler> {
        return std::make_unique<GraphCompiler>(standalone_subgraph(*body), options);
      };
    };
    auto formal = [](const Graph& body) {
      std::vector<std::string> names;
      for (const Value* v : body.inputs) names.push_back(v ? v->name : "");
      return names;
    };
    auto body_of = [&](const char* key) -> std::shared_ptr<const Graph> {
      auto it = n.attrs.find(key);
      if (it == n.attrs.end() || !it->second.g)
        fail(cut->described, ": no graph attribute '", key, "'");
      return it->second.g;
    };
    const bool plain = n.domain.empty() || n.domain == "ai.onnx";
    const bool control = plain && (n.op_type == "If" || n.op_type == "Loop" ||
                                   n.op_type == "Scan" || n.op_type == "SequenceMap");
    const bool on_strings = !control && !is_sequence_op(n.op_type, n.domain) && cut->single &&
                            !cut->single->nodes.empty() &&
                            runs_on_strings(*cut->single, *cut->single->nodes[0]);
    if (on_strings && is_string_mover(n.op_type, n.domain)) {
      // Compiled for the positions of its string inputs' elements (cut_node.h).
      cut_->kind = ModelCut::Kind::StringMover;
      std::shared_ptr<const Graph> moved = positions_graph(*cut->single);
      cut_->parts.push_back([moved, options = options_]() -> std::unique_ptr<ModelCompiler> {
        return std::make_unique<GraphCompiler>(copy_graph(*moved), options);
      });
      std::vector<std::string> formal;
      for (const Value* v : moved->inputs) formal.push_back(v->name);
      cut_->part_inputs.push_back(formal);
      for (const Value* v : cut->single->nodes[0]->inputs)
        cut_->string_inputs.push_back(v && v->type.dtype == DType::String);
    } else if (on_strings) {
      cut_->kind = ModelCut::Kind::ValueSized;
    } else if (plain && n.op_type == "SequenceMap") {
      cut_->kind = ModelCut::Kind::SequenceMap;
      std::shared_ptr<const Graph> body = body_of("body");
      cut_->parts.push_back(standalone(body));
      cut_->part_inputs.push_back(formal(*body));
      for (const Value* v : body->outputs)
        cut_->body_outputs.emplace_back(v->type.dtype, v->type.shape);
    } else if (is_value_sized_op(n.op_type, n.domain) || is_sequence_op(n.op_type, n.domain) ||
               (plain && n.op_type == "Identity")) {
      cut_->kind = ModelCut::Kind::ValueSized;
    } else if (n.op_type == "If" && n.domain.empty()) {
      cut_->kind = ModelCut::Kind::If;
      for (const char* key : {"then_branch", "else_branch"}) {
        std::shared_ptr<const Graph> body = body_of(key);
        cut_->parts.push_back(standalone(body));
        cut_->part_inputs.push_back(formal(*body));
      }
    } else if ((n.op_type == "Loop" || n.op_type == "Scan") && n.domain.empty()) {
      cut_->kind = n.op_type == "Loop" ? ModelCut::Kind::Loop : ModelCut::Kind::Scan;
      std::shared_ptr<const Graph> body = body_of("body");
      cut_->parts.push_back(standalone(body));
      cut_->part_inputs.push_back(formal(*body));
      for (const Value* v : body->outputs) {
        std::vector<int64_t> dims = v->type.shape;
        if (!v->type.rank_known) dims = {-1};  // never static
        cut_->body_outputs.emplace_back(v->type.dtype, dims);
      }
      cut_->num_scan_inputs = n.attr_int("num_scan_inputs", 0);
      cut_->scan_batched = n.op_type == "Scan" && cut->single && cut->single->opset("") < 9;
      if (cut_->scan_batched) {
        cut_->scan_input_directions = n.attr_ints("directions");
      } else {
        cut_->scan_input_axes = n.attr_ints("scan_input_axes");
        cut_->scan_input_directions = n.attr_ints("scan_input_directions");
        cut_->scan_output_axes = n.attr_ints("scan_output_axes");
        cut_->scan_output_directions = n.attr_ints("scan_output_directions");
      }
    } else if (cut->single && !cut->single->nodes.empty() &&
               runs_in_engine(*cut->single, *cut->single->nodes[0])) {
      // Not an op the engine runs on sequences or optionals (a graph of it alone would be
      // cut at it again).
      throw UnsupportedError(
          str_cat(cut->described, ": not supported on sequence or optional values"));
    } else {
      cut_->kind = ModelCut::Kind::Single;
      std::shared_ptr<const Graph> alone = cut->single;
      cut_->parts.push_back([alone, options = options_]() -> std::unique_ptr<ModelCompiler> {
        return std::make_unique<GraphCompiler>(copy_graph(*alone), options);
      });
      cut_->part_inputs.emplace_back();
    }
    cut_->node_inputs = cut->node_inputs;
    cut_->node_outputs = cut->node_outputs;
    for (const auto& d : cut->node_constants) cut_->node_constants.push_back(tensor_of(d));
    auto node = std::make_shared<const Node>(std::move(cut->node));
    // A RegexFullMatch compiles its pattern now: an invalid one fails the load.
    std::shared_ptr<const RegexFullMatch> regex;
    if (node->op_type == "RegexFullMatch" && (node->domain.empty() || node->domain == "ai.onnx"))
      regex = std::make_shared<const RegexFullMatch>(*node, cut_->node);
    cut_->run_node = [node, what = cut_->node, n = cut_->node_outputs.size(), on_strings, regex](
                         const std::vector<const EngineValue*>& in, int64_t memory_limit) {
      if (regex) return regex->run(in, memory_limit);
      if (on_strings) return run_string_op(*node, what, n, in, memory_limit);
      if (!is_value_sized_op(node->op_type, node->domain))
        return run_sequence_op(*node, what, n, in, memory_limit);
      std::vector<const Tensor*> tensors;
      for (size_t i = 0; i < in.size(); ++i)
        tensors.push_back(in[i] ? &in[i]->tensor(str_cat(what, ": input ", i)) : nullptr);
      std::vector<EngineValue> out;
      for (Tensor& t : run_value_sized_op(*node, what, n, tensors))
        out.push_back(EngineValue::of(std::move(t)));
      return out;
    };
    cut_->outputs = cut->outputs;
    for (const auto& [name, d] : cut->constant_outputs)
      cut_->constant_outputs.emplace_back(name, tensor_of(d));
  }

  // The plans compiled once for the model's symbolic dims, instantiated per shape set that
  // fits one's symbols (one size per dim name, its specialized dims the 0 or 1 they were, its
  // guards holding): `types` as that plan for them, or false. A shape set that fits none
  // compiles a new one (its dims fed 0 or 1 specialized: a decoder's first step, of an empty
  // past, and its later ones, of one token, are two plans), at most kMaxSymbolicPlans; a
  // model whose compile is not symbolic yet (NotSymbolicError: an op not ported,
  // docs/shapes.md) is compiled per shape from its first try on.
  bool instantiate(const std::vector<TensorType>& types, Plan* out) {
    if (symbolic_ == Symbolic::No) return false;
    std::vector<std::vector<int64_t>> shapes;
    for (const TensorType& t : types) shapes.push_back(t.shape);
    std::vector<int64_t> values;
    for (const std::unique_ptr<SymbolicPlan>& sp : symbolic_plans_) {
      if (sp->shapes.values_for(shapes, &values) && guards_hold(sp->guards, values)) {
        *out = instantiate_plan(*sp, values, options_);
        return true;
      }
    }
    if (symbolic_plans_.size() >= kMaxSymbolicPlans) return false;
    std::vector<TensorType> declared;
    for (const Value* v : graph_->inputs) declared.push_back(v->type);
    try {
      // Shapes that fit symbols, and some symbol left: else this shape set is compiled alone.
      const ShapeEnv env = ShapeEnv::for_inputs(declared, types);
      if (env.symbols.empty()) return false;
      // Each pattern of specialized dims is tried once: a shape set that fits its plan's
      // symbols but not its guards is compiled on its own.
      std::vector<int64_t> pattern;
      for (const std::vector<Index>& sizes : env.input_sizes)
        for (const Index& d : sizes) pattern.push_back(d->kind == IndexKind::Const ? d->c : -1);
      if (!tried_patterns_.insert(pattern).second) return false;
    } catch (const Error&) {
      return false;
    }
    try {
      symbolic_plans_.push_back(
          std::make_unique<SymbolicPlan>(compile_symbolic(*graph_, types, options_)));
      symbolic_ = Symbolic::Yes;
      ++plans_made_;
    } catch (const std::exception& e) {
      // NotSymbolicError, or an error the compile per shape reports.
      if (symbolic_ == Symbolic::Yes) return false;  // this pattern of sizes only
      symbolic_ = Symbolic::No;
      not_symbolic_ = e.what();
      return false;
    }
    const SymbolicPlan& sp = *symbolic_plans_.back();
    if (!sp.shapes.values_for(shapes, &values))
      fail("internal: a plan that does not fit its hints");
    *out = instantiate_plan(sp, values, options_);
    return true;
  }

  // A model is compiled once per pattern of its symbolic dims fed 0 or 1: these many at most.
  static constexpr size_t kMaxSymbolicPlans = 4;
  enum class Symbolic { Untried, Yes, No };
  Symbolic symbolic_ = Symbolic::Untried;
  std::vector<std::unique_ptr<SymbolicPlan>> symbolic_plans_;
  std::set<std::vector<int64_t>> tried_patterns_;  // per input dim: its constant, or -1
  std::string not_symbolic_;  // why the compile is not symbolic (a NotSymbolicError's text)
  int64_t plans_made_ = 0;
  std::unique_ptr<Graph> graph_;
  std::unique_ptr<Graph> pristine_;  // as imported (null for a graph cut at load)
  std::unique_ptr<ModelCut> cut_;
  CompileOptions options_;
  std::vector<DeclaredIo> inputs_, outputs_;
};

}  // namespace

std::unique_ptr<ModelCompiler> load_onnx_model(const uint8_t* data, size_t size,
                                               const CompileOptions& options) {
  std::unique_ptr<Graph> g;
  {
    StageTimer timer("import");
    g = import_onnx(data, size, "");
  }
  return std::make_unique<GraphCompiler>(std::move(g), options);
}

std::unique_ptr<ModelCompiler> load_onnx_model_file(const std::string& path,
                                                    const CompileOptions& options) {
  std::unique_ptr<Graph> g;
  {
    StageTimer timer("import");
    g = import_onnx_file(path);
  }
  return std::make_unique<GraphCompiler>(std::move(g), options);
}

bool has_compiler() {
  return true;
}

}  // namespace ferrite
