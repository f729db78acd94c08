// Engine: model loading, input checking and the per-shape session cache (see engine.h).
// The checks here run before the compiler sees the shapes, so a user who feeds the wrong
// thing gets a message in terms of the model's declared inputs, not of some inner node.
#include "bindings/engine/engine.h"

#include "compiler/frontend/onnx/onnx_import.h"
#include "compiler/plan/error.h"
#ifdef FERRITE_HAS_JIT
#include "jit/jit_backend.h"
#endif

namespace ferrite {
namespace {

// "[1,3]"; a symbolic dim prints its name ("N"), an unnamed unknown dim "?".
std::string shape_string(const std::vector<int64_t>& shape,
                         const std::vector<std::string>& dim_names = {}) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    if (shape[i] >= 0) {
      s += std::to_string(shape[i]);
    } else {
      s += i < dim_names.size() && !dim_names[i].empty() ? dim_names[i] : "?";
    }
  }
  return s + "]";
}

std::string type_string(const TensorType& t) {
  std::string s = dtype_name(t.dtype);
  return t.rank_known ? s + shape_string(t.shape, t.dim_names) : s + "[...]";
}

std::string input_names(const std::vector<IoInfo>& inputs) {
  std::string s;
  for (const IoInfo& in : inputs) s += (s.empty() ? "" : ", ") + in.name;
  return s.empty() ? "none" : s;
}

IoInfo io_info(const Value& v) {
  IoInfo info;
  info.name = v.name;
  info.dtype = v.type.dtype;
  info.shape = v.type.shape;
  return info;
}

// Inputs with at most this many elements are the ones a value-specialized plan bakes in.
constexpr int64_t kMaxValueElements = 64;
constexpr size_t kMaxValueSessions = 32;

void append_bytes(std::string* key, const void* data, size_t n) {
  key->append(static_cast<const char*>(data), n);
}

// Symbolic dims bound so far: name -> (size, the input that bound it).
using SymbolSizes = std::map<std::string, std::pair<int64_t, std::string>>;

// Checks rank and static dims of one fed input; binds (and checks) its symbolic dims.
void check_shape(const std::string& input, const TensorType& declared,
                 const std::vector<int64_t>& fed, SymbolSizes* symbols) {
  if (!declared.rank_known) return;
  bool ok = declared.shape.size() == fed.size();
  for (size_t i = 0; ok && i < fed.size(); ++i) {
    ok = declared.shape[i] < 0 || declared.shape[i] == fed[i];
  }
  if (!ok) {
    fail("input '", input, "': expected shape ", shape_string(declared.shape, declared.dim_names),
         ", got ", shape_string(fed));
  }
  for (size_t i = 0; i < fed.size() && i < declared.dim_names.size(); ++i) {
    const std::string& sym = declared.dim_names[i];
    if (declared.shape[i] >= 0 || sym.empty()) continue;
    auto bound = symbols->emplace(sym, std::make_pair(fed[i], input)).first->second;
    if (bound.first != fed[i]) {
      fail("input '", input, "': dimension '", sym, "' is ", fed[i], " here but ", bound.first,
           " in input '", bound.second, "'");
    }
  }
}

}  // namespace

std::unique_ptr<Engine> Engine::from_file(const std::string& path, EngineOptions options) {
  std::unique_ptr<Engine> engine(new Engine());
  engine->init(import_onnx_file(path), std::move(options));
  return engine;
}

std::unique_ptr<Engine> Engine::from_bytes(const uint8_t* data, size_t size,
                                           EngineOptions options) {
  std::unique_ptr<Engine> engine(new Engine());
  engine->init(import_onnx(data, size, ""), std::move(options));
  return engine;
}

std::string default_backend() {
#ifdef FERRITE_HAS_JIT
  jit::register_jit_backend();
  return "jit";
#else
  return "portable";
#endif
}

Engine::~Engine() = default;

bool Engine::static_inputs() const {
  for (const TensorType& t : declared_)
    if (!t.is_static()) return false;
  return true;
}

void Engine::init(std::unique_ptr<Graph> g, EngineOptions options) {
  if (!g) fail("model import produced no graph");
  graph_ = std::move(g);
  options_ = std::move(options);
  // oneDNN's convolutions (the JIT backend's externs) are fastest on channels-last data.
  if (options_.session.backend == "jit") options_.compile.channels_last = true;
  prepare_graph(*graph_, options_.compile);
  for (const Value* v : graph_->inputs) {
    // A tensor type we cannot hold (string, undefined) makes the whole model unusable.
    if (dtype_size(v->type.dtype) == 0) {
      throw UnsupportedError(str_cat("input '", v->name, "' has element type ",
                                     dtype_name(v->type.dtype), ", which is not supported"));
    }
    inputs_.push_back(io_info(*v));
    declared_.push_back(v->type);
  }
  for (const Value* v : graph_->outputs) {
    if (v->type.dtype == DType::String) {
      throw UnsupportedError(
          str_cat("output '", v->name, "' has element type string, which is not supported"));
    }
    outputs_.push_back(io_info(*v));
  }
}

std::vector<Tensor> Engine::run(const std::vector<std::pair<std::string, const Tensor*>>& feeds) {
  const std::vector<const Tensor*> ordered = checked_feeds(feeds);
  return session_for_checked(ordered).run(ordered);
}

Session& Engine::session_for_feeds(
    const std::vector<std::pair<std::string, const Tensor*>>& feeds) {
  return session_for_checked(checked_feeds(feeds));
}

std::vector<const Tensor*> Engine::checked_feeds(
    const std::vector<std::pair<std::string, const Tensor*>>& feeds) const {
  std::vector<const Tensor*> ordered(inputs_.size(), nullptr);
  for (const auto& feed : feeds) {
    size_t i = 0;
    while (i < inputs_.size() && inputs_[i].name != feed.first) ++i;
    if (i == inputs_.size()) {
      fail("unknown input '", feed.first, "' (model inputs: ", input_names(inputs_), ")");
    }
    if (ordered[i]) fail("input '", feed.first, "' given twice");
    if (!feed.second) fail("input '", feed.first, "' has no tensor");
    ordered[i] = feed.second;
  }
  SymbolSizes symbols;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const TensorType& declared = declared_[i];
    const std::string& name = inputs_[i].name;
    if (!ordered[i]) fail("missing input '", name, "' (expected ", type_string(declared), ")");
    if (ordered[i]->dtype() != declared.dtype) {
      fail("input '", name, "': expected ", dtype_name(declared.dtype), ", got ",
           dtype_name(ordered[i]->dtype()));
    }
    check_shape(name, declared, ordered[i]->shape(), &symbols);
  }
  return ordered;
}

Session& Engine::session_for_checked(const std::vector<const Tensor*>& ordered) {
  std::vector<std::vector<int64_t>> shapes;
  for (const Tensor* t : ordered) shapes.push_back(t->shape());
  if (!needs_values_.count(shapes)) {
    try {
      return session_for(shapes);
    } catch (const NeedsInputValueError&) {
      needs_values_.insert(shapes);  // from now on, compile per input values
    }
  }
  return session_for_values(ordered);
}

Session& Engine::session_for_values(const std::vector<const Tensor*>& inputs) {
  std::string key;
  std::vector<TensorType> types(inputs.size());
  std::vector<std::shared_ptr<const TensorData>> values(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = *inputs[i];
    types[i].dtype = t.dtype();
    types[i].shape = t.shape();
    append_bytes(&key, t.shape().data(), t.shape().size() * sizeof(int64_t));
    key += '|';
    // Only small inputs can be shapes, axes or scalars; large ones stay runtime data.
    if (t.elements() > kMaxValueElements) continue;
    auto data = std::make_shared<TensorData>();
    data->dtype = t.dtype();
    data->shape = t.shape();
    data->bytes.assign(t.data(), t.data() + t.nbytes());
    append_bytes(&key, t.data(), t.nbytes());
    key += '|';
    values[i] = std::move(data);
  }
  auto it = value_sessions_.find(key);
  if (it != value_sessions_.end()) return *it->second;
  // A model fed ever-changing values must not grow the cache without bound.
  if (value_sessions_.size() >= kMaxValueSessions) value_sessions_.clear();
  if (!graph_) fail("the model's graph was released after its only plan was compiled");
  Plan plan = compile_graph(*graph_, types, options_.compile, values);
  auto session = std::make_unique<Session>(std::move(plan), options_.session);
  return *value_sessions_.emplace(key, std::move(session)).first->second;
}

Session& Engine::session_for(const std::vector<std::vector<int64_t>>& shapes) {
  if (shapes.size() != inputs_.size()) {
    fail("expected ", inputs_.size(), " input shapes, got ", shapes.size());
  }
  auto it = sessions_.find(shapes);
  if (it != sessions_.end()) return *it->second;
  std::vector<TensorType> types(shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    for (int64_t d : shapes[i]) {
      if (d < 0)
        fail("input '", inputs_[i].name, "': shape ", shape_string(shapes[i]), " is not concrete");
    }
    types[i].dtype = inputs_[i].dtype;
    types[i].shape = shapes[i];
  }
  if (!graph_) fail("the model's graph was released after its only plan was compiled");
  Plan plan = compile_graph(*graph_, types, options_.compile);
  // With every input dim static, these are the only shapes checked feeds can have, and this
  // plan did not need input values: the graph (a copy of every weight) is never needed
  // again. Released before the session copies the plan's constants.
  if (static_inputs()) graph_.reset();
  auto session = std::make_unique<Session>(std::move(plan), options_.session);
  return *sessions_.emplace(shapes, std::move(session)).first->second;
}

}  // namespace ferrite
