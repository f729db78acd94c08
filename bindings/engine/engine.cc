// Engine: model loading, input checking and the per-shape session cache (see engine.h).
// The checks here run before the compiler sees the shapes, so a user who feeds the wrong
// thing gets a message in terms of the model's declared inputs, not of some inner node.
#include "bindings/engine/engine.h"

#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <unordered_map>

#include <sys/stat.h>

#include "compiler/plan/error.h"
#include "compiler/plan/plan_io.h"
#include "compiler/plan/stage_times.h"
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

std::string type_string(const DeclaredIo& t) {
  std::string s = dtype_name(t.info.dtype);
  return t.rank_known ? s + shape_string(t.info.shape, t.dim_names) : s + "[...]";
}

// "sequence<float32>", "optional<float32[N,3]>".
std::string container_text(const DeclaredIo& d) {
  switch (d.container) {
    case Container::Tensor:
      return type_string(d);
    case Container::Sequence:
      return "sequence<" + type_string(d) + ">";
    case Container::Optional:
      return "optional<" + type_string(d) + ">";
    case Container::OptionalSequence:
      return "optional<sequence<" + type_string(d) + ">>";
  }
  return type_string(d);
}

std::string input_names(const std::vector<IoInfo>& inputs) {
  std::string s;
  for (const IoInfo& in : inputs) s += (s.empty() ? "" : ", ") + in.name;
  return s.empty() ? "none" : s;
}

// Inputs with at most this many elements are the ones a value-specialized plan bakes in.
constexpr int64_t kMaxValueElements = 64;
constexpr size_t kMaxValueSessions = 32;

void append_bytes(std::string* key, const void* data, size_t n) {
  key->append(static_cast<const char*>(data), n);
}

constexpr char kPlanMagic[] = "FRPLAN";  // plan_io.cc's first bytes

// The compile options the backend wants: oneDNN's convolutions (the JIT backend's externs)
// are fastest on channels-last data. Plans are valid for every backend either way.
EngineOptions for_backend(EngineOptions options) {
  if (options.session.backend == "jit") options.compile.channels_last = true;
  // One memory limit for the plan the compiler makes and the session that holds it.
  if (options.compile.memory_limit <= 0)
    options.compile.memory_limit = options.session.memory_limit;
  return options;
}

// Symbolic dims bound so far: name -> (size, the input that bound it).
using SymbolSizes = std::map<std::string, std::pair<int64_t, std::string>>;

// Checks rank and static dims of one fed input; binds (and checks) its symbolic dims.
void check_shape(const std::string& input, const DeclaredIo& declared,
                 const std::vector<int64_t>& fed, SymbolSizes* symbols) {
  if (!declared.rank_known) return;
  const std::vector<int64_t>& shape = declared.info.shape;
  bool ok = shape.size() == fed.size();
  for (size_t i = 0; ok && i < fed.size(); ++i) ok = shape[i] < 0 || shape[i] == fed[i];
  if (!ok) {
    fail("input '", input, "': expected shape ", shape_string(shape, declared.dim_names), ", got ",
         shape_string(fed));
  }
  for (size_t i = 0; i < fed.size() && i < declared.dim_names.size(); ++i) {
    const std::string& sym = declared.dim_names[i];
    if (shape[i] >= 0 || sym.empty()) continue;
    auto bound = symbols->emplace(sym, std::make_pair(fed[i], input)).first->second;
    if (bound.first != fed[i]) {
      fail("input '", input, "': dimension '", sym, "' is ", fed[i], " here but ", bound.first,
           " in input '", bound.second, "'");
    }
  }
}

// One fed tensor (a tensor input's, or an item of a sequence input) against its declaration.
void check_tensor(const DeclaredIo& declared, const std::string& name, const Tensor* t,
                  SymbolSizes* symbols) {
  if (t->dtype() != declared.info.dtype && declared.info.dtype != DType::Undefined) {
    fail("input '", name, "': expected ", dtype_name(declared.info.dtype), ", got ",
         dtype_name(t->dtype()));
  }
  if (declared.container == Container::Tensor) check_shape(name, declared, t->shape(), symbols);
}

}  // namespace

bool DeclaredIo::is_static() const {
  if (!rank_known || container != Container::Tensor) return false;
  for (int64_t d : info.shape)
    if (d < 0) return false;
  return true;
}

bool Engine::is_plan_bytes(const uint8_t* data, size_t size) {
  const size_t n = sizeof(kPlanMagic) - 1;
  return size >= n && std::memcmp(data, kPlanMagic, n) == 0;
}

std::unique_ptr<Engine> Engine::from_file(const std::string& path, EngineOptions options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open '", path, "'");
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // A pipe or a device (`ferrite run /dev/stdin < m.onnx`): read through once, as bytes.
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                     std::istreambuf_iterator<char>());
    if (in.bad() || bytes.empty()) fail("cannot read '", path, "': no bytes");
    return from_bytes(bytes.data(), bytes.size(), std::move(options));
  }
  char head[sizeof(kPlanMagic) - 1] = {};
  in.read(head, sizeof(head));
  if (is_plan_bytes(reinterpret_cast<const uint8_t*>(head), static_cast<size_t>(in.gcount()))) {
    // One read of the whole file (a plan is mostly weights: tens of MB).
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    in.seekg(0);
    if (size < 0) fail("cannot read '", path, "'");
    std::vector<uint8_t> bytes(static_cast<size_t>(size));
    in.read(reinterpret_cast<char*>(bytes.data()), size);
    if (in.gcount() != size) fail("cannot read '", path, "'");
    return from_bytes(bytes.data(), bytes.size(), std::move(options));
  }
  in.close();
  options = for_backend(std::move(options));
  std::unique_ptr<ModelCompiler> compiler = load_onnx_model_file(path, options.compile);
  std::unique_ptr<Engine> engine(new Engine());
  engine->init(std::move(compiler), std::move(options));
  return engine;
}

std::unique_ptr<Engine> Engine::from_bytes(const uint8_t* data, size_t size,
                                           EngineOptions options) {
  if (is_plan_bytes(data, size)) {
    Plan plan = [&] {
      StageTimer timer("deserialize_plan");
      return deserialize_plan(data, size);
    }();
    return from_plan(std::move(plan), options);
  }
  options = for_backend(std::move(options));
  std::unique_ptr<ModelCompiler> compiler = load_onnx_model(data, size, options.compile);
  std::unique_ptr<Engine> engine(new Engine());
  engine->init(std::move(compiler), std::move(options));
  return engine;
}

std::unique_ptr<Engine> Engine::from_plan(Plan plan, EngineOptions options) {
  std::unique_ptr<Engine> engine(new Engine());
  engine->init_plan(std::move(plan), std::move(options));
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

std::string unknown_backend_message(const std::string& backend) {
  default_backend();  // registers the build's backends
  std::string names;
  for (const std::string& b : available_backends()) {
    if (b == backend) return "";
    names += (names.empty() ? "" : ", ") + b;
  }
  return str_cat("unknown backend '", backend, "' (available: ", names, ")");
}

size_t Engine::output_index(const std::string& name) const {
  for (size_t k = 0; k < outputs_.size(); ++k)
    if (outputs_[k].name == name) return k;
  std::string names;
  for (const IoInfo& o : outputs_) names += (names.empty() ? "" : ", ") + o.name;
  fail("unknown output '", name, "' (model outputs: ", names, ")");
}

bool Engine::static_inputs() const {
  for (const DeclaredIo& d : declared_)
    if (!d.is_static()) return false;
  return true;
}

void Engine::init(std::unique_ptr<ModelCompiler> compiler, EngineOptions options) {
  options_ = std::move(options);
  compiler_ = std::move(compiler);
  for (const DeclaredIo& in : compiler_->inputs()) {
    // A tensor type we cannot hold (string, undefined) makes the whole model unusable.
    const bool undefined_ok =
        in.info.dtype == DType::Undefined && (part_ || in.container != Container::Tensor);
    if (dtype_size(in.info.dtype) == 0 && !undefined_ok && in.info.dtype != DType::String) {
      throw UnsupportedError(str_cat("input '", in.info.name, "' has element type ",
                                     dtype_name(in.info.dtype), ", which is not supported"));
    }
    inputs_.push_back(in.info);
    declared_.push_back(in);
  }
  for (const DeclaredIo& out : compiler_->outputs()) {
    outputs_.push_back(out.info);
    output_dim_names_.push_back(out.dim_names);
    output_containers_.push_back(out.container);
  }
  for (size_t i = 0; i < inputs_.size(); ++i) input_index_.emplace(inputs_[i].name, i);
  if (std::unique_ptr<ModelCut> cut = compiler_->take_cut()) {
    compiler_.reset();
    init_parts(std::move(cut));
    return;
  }
  // More than one session (per shape set, per input values): they share packed weights.
  if (!static_inputs()) options_.session.packed_store = std::make_shared<PackedStore>();
  if (!options_.compile_at_load || !static_inputs()) return;
  std::vector<std::vector<int64_t>> shapes;
  for (const IoInfo& in : inputs_) shapes.push_back(in.shape);
  try {
    session_for(shapes);
  } catch (const NeedsInputValueError&) {
    needs_values_.insert(shapes);  // compiled at the first run, for its input values
  } catch (const NeedsCutError& e) {
    if (!cut_for(e)) throw;
  }
}

void Engine::init_plan(Plan plan, EngineOptions options) {
  options_ = std::move(options);
  auto session = std::make_unique<Session>(std::move(plan), options_.session);
  std::vector<std::vector<int64_t>> shapes;
  for (const IoInfo& in : session->inputs()) {
    DeclaredIo d;
    d.info = in;
    declared_.push_back(d);
    inputs_.push_back(in);
    shapes.push_back(in.shape);
  }
  outputs_ = session->outputs();
  sessions_[shapes].session = std::move(session);
  for (size_t i = 0; i < inputs_.size(); ++i) input_index_.emplace(inputs_[i].name, i);
}

std::vector<Tensor> Engine::run(const std::vector<std::pair<std::string, const Tensor*>>& feeds) {
  if (!parts_ && !part_) {  // a part adopts its inputs' types (run_values)
    const std::vector<const Tensor*> ordered = checked_feeds(feeds);
    if (Session* session = session_or_cut(ordered)) {
      std::vector<Tensor> outputs = session->run(ordered);
      last_session_ = session;
      return outputs;
    }
  }
  // In parts: as values, the outputs copied out of them.
  std::vector<EngineValue> held;
  held.reserve(feeds.size());
  std::vector<std::pair<std::string, const EngineValue*>> values;
  for (const auto& [name, t] : feeds) {
    if (t) held.push_back(EngineValue::borrowed(*t));
    values.emplace_back(name, t ? &held.back() : nullptr);
  }
  std::vector<EngineValue> out = run_values(values);
  std::vector<Tensor> tensors;
  for (size_t k = 0; k < out.size(); ++k) {
    const Tensor& t = out[k].tensor(str_cat("output '", outputs_[k].name, "'"));
    tensors.push_back(Tensor::copy_of(t));
  }
  return tensors;
}

std::vector<EngineValue> Engine::run_values(
    const std::vector<std::pair<std::string, const EngineValue*>>& feeds) {
  if (part_) adopt_dtypes(feeds);
  const std::vector<const EngineValue*> ordered = checked_values(feeds);
  if (!parts_) {
    std::vector<const Tensor*> tensors;
    for (size_t i = 0; i < ordered.size(); ++i)
      tensors.push_back(&ordered[i]->tensor(str_cat("input '", inputs_[i].name, "'")));
    if (Session* session = session_or_cut(tensors)) {
      std::vector<EngineValue> out;
      for (Tensor& t : session->run(tensors)) out.push_back(EngineValue::of(std::move(t)));
      last_session_ = session;
      return out;
    }
  }
  return run_parts(ordered);
}

Session* Engine::session_or_cut(const std::vector<const Tensor*>& ordered) {
  try {
    return &session_for_checked(ordered);
  } catch (const NeedsCutError& e) {
    if (!cut_for(e)) throw;
    return nullptr;
  }
}

Session& Engine::session_for_feeds(
    const std::vector<std::pair<std::string, const Tensor*>>& feeds) {
  return session_for_checked(checked_feeds(feeds));
}

std::vector<std::vector<std::string>> Engine::input_dim_names() const {
  std::vector<std::vector<std::string>> names;
  for (const DeclaredIo& d : declared_) names.push_back(d.dim_names);
  return names;
}

std::vector<std::vector<std::string>> Engine::output_dim_names() const {
  std::vector<std::vector<std::string>> names = output_dim_names_;
  names.resize(outputs_.size());  // a compiled plan's: none
  return names;
}

Plan Engine::compile_plan(const std::vector<std::pair<std::string, const Tensor*>>& feeds) {
  const std::vector<const Tensor*> ordered = checked_feeds(feeds);
  if (!compiler_) fail(no_compiler_message());
  std::vector<IoInfo> types(ordered.size());
  for (size_t i = 0; i < ordered.size(); ++i) {
    types[i].dtype = ordered[i]->dtype();
    types[i].shape = ordered[i]->shape();
  }
  return compile(types, {});
}

Plan Engine::compile(const std::vector<IoInfo>& types, const std::vector<const Tensor*>& values) {
  const auto start = std::chrono::steady_clock::now();
  const int64_t made = compiler_->plans_made();
  Plan plan = compiler_->compile(types, values);
  compiles_ += compiler_->plans_made() - made;
  compile_ms_ +=
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return plan;
}

std::string Engine::symbolic_status() const {
  return compiler_ && !parts_ ? compiler_->symbolic_status() : "";
}

std::vector<const Tensor*> Engine::checked_feeds(
    const std::vector<std::pair<std::string, const Tensor*>>& feeds) const {
  std::vector<const Tensor*> ordered = by_input(feeds);
  SymbolSizes symbols;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (declared_[i].container != Container::Tensor)
      fail("input '", inputs_[i].name, "' is a ", container_text(declared_[i]),
           ": feed it through a door that takes sequences and optionals");
    check_tensor(declared_[i], inputs_[i].name, ordered[i], &symbols);
  }
  return ordered;
}

template <class Fed>
std::vector<const Fed*> Engine::by_input(
    const std::vector<std::pair<std::string, const Fed*>>& feeds) const {
  std::vector<const Fed*> ordered(inputs_.size(), nullptr);
  for (const auto& feed : feeds) {
    auto found = input_index_.find(feed.first);
    if (found == input_index_.end()) {
      fail("unknown input '", feed.first, "' (model inputs: ", input_names(inputs_), ")");
    }
    const size_t i = found->second;
    if (ordered[i]) fail("input '", feed.first, "' given twice");
    if (!feed.second) fail("input '", feed.first, "' has no value");
    ordered[i] = feed.second;
  }
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (!ordered[i])
      fail("missing input '", inputs_[i].name, "' (expected ", container_text(declared_[i]), ")");
  }
  return ordered;
}

std::vector<const EngineValue*> Engine::checked_values(
    const std::vector<std::pair<std::string, const EngineValue*>>& feeds) const {
  std::vector<const EngineValue*> ordered = by_input(feeds);
  SymbolSizes symbols;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const EngineValue& v = *ordered[i];
    const Container c = declared_[i].container;
    // A part's input computed before the cut, of no declared type, takes any value.
    const bool untyped = part_ && !declared_[i].rank_known &&
                         declared_[i].info.dtype == DType::Undefined && c == Container::Tensor;
    const bool fits = untyped         ? true
                      : v.is_tensor() ? c == Container::Tensor || c == Container::Optional
                      : v.is_sequence()
                          ? c == Container::Sequence || c == Container::OptionalSequence
                          : c == Container::Optional || c == Container::OptionalSequence;
    if (!fits)
      fail("input '", inputs_[i].name, "': expected ", container_text(declared_[i]), ", got ",
           v.type_text());
    if (v.is_tensor()) check_tensor(declared_[i], inputs_[i].name, &v.tensor(""), &symbols);
    if (v.is_sequence()) {
      for (const EngineValue::TensorRef& t : v.items(""))
        check_tensor(declared_[i], inputs_[i].name, t.get(), &symbols);
    }
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
  std::vector<IoInfo> types(inputs.size());
  std::vector<const Tensor*> values(inputs.size(), nullptr);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = *inputs[i];
    types[i].dtype = t.dtype();
    types[i].shape = t.shape();
    append_bytes(&key, t.shape().data(), t.shape().size() * sizeof(int64_t));
    key += '|';
    // Only small inputs can be shapes, axes or scalars; large ones stay runtime data.
    if (t.elements() > kMaxValueElements) continue;
    append_bytes(&key, t.data(), t.nbytes());
    key += '|';
    values[i] = &t;
  }
  auto it = value_sessions_.find(key);
  if (it != value_sessions_.end()) return *it->second;
  // A model fed ever-changing values must not grow the cache without bound.
  if (value_sessions_.size() >= kMaxValueSessions) {
    value_sessions_.clear();
    last_session_ = nullptr;
  }
  if (!compiler_) fail(no_compiler_message());
  if (!options_.session.packed_store)  // sessions per input values share packed weights too
    options_.session.packed_store = std::make_shared<PackedStore>();
  Plan plan = compile(types, values);
  auto session = std::make_unique<Session>(std::move(plan), options_.session);
  return *value_sessions_.emplace(key, std::move(session)).first->second;
}

std::string Engine::no_compiler_message() const {
  if (parts_) return parts_message();
  if (released_graph_ && !session_error_.empty())
    return "the model's session failed after its graph was released: " + session_error_;
  if (released_graph_) return "the model's graph was released after its only plan was compiled";
  std::string s = "this compiled plan takes only the shapes it was compiled for:";
  for (const IoInfo& in : inputs_) s += " " + in.name + shape_string(in.shape);
  return s;
}

Session& Engine::session_for(const std::vector<std::vector<int64_t>>& shapes) {
  if (shapes.size() != inputs_.size()) {
    fail("expected ", inputs_.size(), " input shapes, got ", shapes.size());
  }
  auto it = sessions_.find(shapes);
  if (it != sessions_.end()) {
    it->second.last_used = ++use_clock_;
    return *it->second.session;
  }
  std::vector<IoInfo> types(shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    for (int64_t d : shapes[i]) {
      if (d < 0)
        fail("input '", inputs_[i].name, "': shape ", shape_string(shapes[i]), " is not concrete");
    }
    types[i].dtype = inputs_[i].dtype;
    types[i].shape = shapes[i];
  }
  if (!compiler_) fail(no_compiler_message());
  // With every input dim static, these are the only shapes checked feeds can have, and this
  // plan did not need input values: the graph (a copy of every weight) is never needed
  // again. Released once the session has its pool and kernels, before its externs pack the
  // weights: a session that fails before (past the memory limit, out of memory for the
  // pool) leaves the engine able to report that error, or to succeed, on the next run.
  SessionOptions session_options = options_.session;
  if (static_inputs()) {
    session_options.before_packing = [this] {
      compiler_.reset();
      released_graph_ = true;
    };
  }
  std::unique_ptr<Session> session;
  try {
    session = std::make_unique<Session>(compile(types, {}), session_options);
  } catch (const Error& e) {
    if (released_graph_) session_error_ = e.what();
    throw;
  }
  if (sessions_.size() >= kMaxShapeSessions) {
    auto lru = sessions_.begin();
    for (auto s = sessions_.begin(); s != sessions_.end(); ++s)
      if (s->second.last_used < lru->second.last_used) lru = s;
    if (last_session_ == lru->second.session.get()) last_session_ = nullptr;
    sessions_.erase(lru);
  }
  CachedSession& cached = sessions_[shapes];
  cached.session = std::move(session);
  cached.last_used = ++use_clock_;
  return *cached.session;
}

}  // namespace ferrite
