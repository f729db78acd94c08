// The Engine for a model cut at a node no plan holds (engine.h's runs_in_parts): a head
// engine, the node (cut_node.h), a tail engine; values cross by name.
#include "bindings/engine/cut_node.h"
#include "bindings/engine/engine.h"
#include "compiler/plan/error.h"

namespace ferrite {

struct Engine::Parts {
  std::unique_ptr<ModelCut> cut;
  std::unique_ptr<Engine> head, tail;
  std::unique_ptr<CutNode> node;
};

Engine::Engine() = default;  // here, where Parts is complete
Engine::~Engine() = default;

namespace {

std::unique_ptr<Engine> part_engine(std::unique_ptr<ModelCompiler> compiler,
                                    const EngineOptions& options) {
  return compiler ? Engine::from_part(std::move(compiler), options) : nullptr;
}

using Values = NamedValues;

const EngineValue* find(const Values& values, const std::string& name, const std::string& what) {
  auto it = values.find(name);
  if (it == values.end()) fail(what, ": value '", name, "' is not computed before it");
  return it->second;
}

// Runs a part on the values it reads; adds its outputs.
void run_part(Engine& part, Values* values, std::vector<EngineValue>* out,
              const std::string& what) {
  std::vector<std::pair<std::string, const EngineValue*>> feeds;
  for (const IoInfo& in : part.inputs()) feeds.emplace_back(in.name, find(*values, in.name, what));
  *out = part.run_values(feeds);
  for (size_t i = 0; i < out->size(); ++i) (*values)[part.outputs()[i].name] = &(*out)[i];
}

// A value given back to the caller: one that refers to a fed tensor it does not own (a model
// output that is a model input) is copied, so it outlives the feeds.
EngineValue owned(const EngineValue& v) {
  auto own = [](const EngineValue::TensorRef& t) {
    return t.use_count() ? t : std::make_shared<const Tensor>(t->dtype(), t->shape(), t->data());
  };
  if (v.is_tensor()) return EngineValue::of(own(v.tensor_ref("")));
  if (!v.is_sequence()) return v;
  std::vector<EngineValue::TensorRef> items;
  for (const EngineValue::TensorRef& t : v.items("")) items.push_back(own(t));
  return EngineValue::sequence(v.elem_dtype(), std::move(items));
}

}  // namespace

std::unique_ptr<Engine> Engine::from_part(std::unique_ptr<ModelCompiler> compiler,
                                          EngineOptions options) {
  std::unique_ptr<Engine> engine(new Engine());
  engine->part_ = true;
  engine->init(std::move(compiler), std::move(options));
  return engine;
}

void Engine::init_parts(std::unique_ptr<ModelCut> cut) {
  parts_ = std::make_unique<Parts>();
  EngineOptions options = options_;
  options.session.packed_store.reset();  // each part decides whether it shares packed weights
  parts_->head = part_engine(std::move(cut->head), options);
  parts_->tail = part_engine(std::move(cut->tail), options);
  parts_->cut = std::move(cut);
  parts_->node = std::make_unique<CutNode>(*parts_->cut, options);
}

void Engine::adopt_dtypes(const std::vector<std::pair<std::string, const EngineValue*>>& feeds) {
  for (const auto& [name, v] : feeds) {
    auto it = input_index_.find(name);
    if (it == input_index_.end() || !v || !v->is_tensor()) continue;
    const Tensor* t = &v->tensor("");
    DeclaredIo& d = declared_[it->second];
    if (d.info.dtype != DType::Undefined) continue;
    d.info.dtype = t->dtype();
    inputs_[it->second].dtype = t->dtype();
  }
}

std::string Engine::parts_message() const {
  return str_cat("this model runs in parts, cut at ", parts_->cut->node,
                 ", which no plan holds: no one plan or session holds it");
}

bool Engine::cut_for(const NeedsCutError& e) {
  if (!compiler_ || e.node_output.empty()) return false;
  std::unique_ptr<ModelCut> cut = compiler_->cut_at(e.node_output);
  if (!cut) return false;
  // Every later run goes through the parts: the plans compiled whole go.
  last_session_ = nullptr;
  sessions_.clear();
  value_sessions_.clear();
  needs_values_.clear();
  compiler_.reset();
  init_parts(std::move(cut));
  return true;
}

std::vector<EngineValue> Engine::run_parts(const std::vector<const EngineValue*>& ordered) {
  const ModelCut& cut = *parts_->cut;
  Values values;
  for (size_t i = 0; i < inputs_.size(); ++i) values[inputs_[i].name] = ordered[i];
  std::vector<EngineValue> constants;
  constants.reserve(cut.constant_outputs.size() + cut.node_constants.size());
  for (const auto& [name, t] : cut.constant_outputs) {
    constants.push_back(EngineValue::of(t));
    values[name] = &constants.back();
  }
  std::vector<EngineValue> head_out, node_out, tail_out;
  if (parts_->head) run_part(*parts_->head, &values, &head_out, cut.node);
  std::vector<const EngineValue*> node_in;
  for (size_t i = 0; i < cut.node_inputs.size(); ++i) {
    const std::string& name = cut.node_inputs[i];
    if (cut.node_constants[i]) {
      constants.push_back(EngineValue::of(cut.node_constants[i]));
      node_in.push_back(&constants.back());
    } else {
      node_in.push_back(name.empty() ? nullptr : find(values, name, cut.node));
    }
  }
  node_out = parts_->node->run(node_in, values);
  for (size_t i = 0; i < node_out.size(); ++i) values[cut.node_outputs[i]] = &node_out[i];
  if (parts_->tail) run_part(*parts_->tail, &values, &tail_out, cut.node);
  std::vector<EngineValue> out;
  for (const std::string& name : cut.outputs)
    out.push_back(owned(*find(values, name, "model output")));
  last_session_ = parts_->tail ? parts_->tail->last_session() : nullptr;
  return out;
}

const std::string& Engine::cut_node() const {
  static const std::string kNone;
  return parts_ ? parts_->cut->node : kNone;
}

std::vector<std::pair<std::string, const Engine*>> Engine::part_engines() const {
  std::vector<std::pair<std::string, const Engine*>> out;
  if (!parts_) return out;
  if (parts_->head) out.emplace_back("head", parts_->head.get());
  for (const auto& e : parts_->node->engines()) out.push_back(e);
  if (parts_->tail) out.emplace_back("tail", parts_->tail.get());
  return out;
}

int64_t Engine::compiles() const {
  if (!parts_) return compiles_;
  return (parts_->head ? parts_->head->compiles() : 0) + parts_->node->compiles() +
         (parts_->tail ? parts_->tail->compiles() : 0);
}

double Engine::compile_ms() const {
  if (!parts_) return compile_ms_;
  return (parts_->head ? parts_->head->compile_ms() : 0) + parts_->node->compile_ms() +
         (parts_->tail ? parts_->tail->compile_ms() : 0);
}

}  // namespace ferrite
