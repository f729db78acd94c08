// The engine: what every door (CLI, C API, Python, JS) shares. Loads a model, either an
// ONNX model or a compiled plan (`ferrite compile`, plan_io.h; told apart by its magic
// bytes). An ONNX model's graph is prepared once and compiled for the concrete input shapes
// of a run (cached per shape set); a model whose inputs are all static is compiled, and its
// session prepared, at load (EngineOptions::compile_at_load), so that its first run is as
// fast as the later ones. A compiled plan has one session, prepared at load, and takes
// exactly the shapes it was compiled for. Either way, inputs are matched by name and
// checked against the declared dtypes and static dims before anything runs. A model whose
// inputs are all static has one plan: once its session exists the graph is released, so
// that its weights are held once by the session (and once more, prepacked, by the externs
// that packed them) instead of also by the graph. It is released once the session has its
// pool and kernels: a session that fails before (past the memory limit, out of memory)
// keeps the graph, and the next run reports that error again or succeeds.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bindings/engine/engine_value.h"
#include "bindings/engine/model_compiler.h"
#include "compiler/compile.h"
#include "compiler/plan/error.h"
#include "runtime/session.h"

namespace ferrite {

// The kernel backend a native x86 build runs by default ("jit"; elsewhere "portable").
// Also registers the build's optional backends, so call it (or create an Engine) before
// listing them.
std::string default_backend();

// "" when `backend` names one of this build's backends, else the error every door reports:
// "unknown backend 'x' (available: jit, portable, reference)".
std::string unknown_backend_message(const std::string& backend);

// Resource limits (compiler/plan/resource_limits.h): session.memory_limit limits the
// compiler too unless compile.memory_limit is set; compile.max_unrolled_nodes bounds
// unrolling; 0 takes the defaults (FERRITE_MEMORY_LIMIT, FERRITE_MAX_UNROLLED_NODES).
struct EngineOptions {
  EngineOptions() { session.backend = default_backend(); }
  SessionOptions session;
  CompileOptions compile;
  // Compile a model whose inputs are all static, and prepare its session, while loading (a
  // failure then fails the load). Off only where the load is not for running (`ferrite
  // compile` writes the plan it compiles itself).
  bool compile_at_load = true;
  // The most iterations a Loop run at run time may take, and the most body runs of a Scan
  // run at run time (its steps, times its batch entries for Scan-8): past it the run fails
  // naming the node, as a loop whose condition never turns false would otherwise hang.
  int64_t max_iterations = int64_t{1} << 20;
};

class Engine {
 public:
  // An ONNX model or a compiled plan, by content. Throws ferrite::Error (UnsupportedError
  // for an ONNX model in a runtime-only build).
  static std::unique_ptr<Engine> from_file(const std::string& path, EngineOptions options);
  static std::unique_ptr<Engine> from_bytes(const uint8_t* data, size_t size,
                                            EngineOptions options);
  static std::unique_ptr<Engine> from_plan(Plan plan, EngineOptions options);
  // An engine for one part of a cut model (engine_parts.cc).
  static std::unique_ptr<Engine> from_part(std::unique_ptr<ModelCompiler> compiler,
                                           EngineOptions options);
  ~Engine();

  // Whether the bytes start like a serialized plan (plan_io.h) rather than an ONNX model.
  static bool is_plan_bytes(const uint8_t* data, size_t size);

  // Declared inputs/outputs (-1 for symbolic dims).
  const std::vector<IoInfo>& inputs() const { return inputs_; }
  const std::vector<IoInfo>& outputs() const { return outputs_; }
  // What holds each input's (output's) tensors: Container::Tensor but for a sequence or
  // optional (run_values takes and gives those).
  Container input_container(size_t i) const { return declared_[i].container; }
  Container output_container(size_t i) const {
    return i < output_containers_.size() ? output_containers_[i] : Container::Tensor;
  }
  // The index of the output named `name`; throws ferrite::Error ("unknown output 'x' (model
  // outputs: ...)") when there is none.
  size_t output_index(const std::string& name) const;
  // Per input (output), the names of its symbolic dims ("" for the others; may be empty,
  // as for a compiled plan's, whose dims are all static).
  std::vector<std::vector<std::string>> input_dim_names() const;
  std::vector<std::vector<std::string>> output_dim_names() const;
  // True when it runs a compiled plan (whose shapes are fixed).
  bool from_compiled_plan() const { return !compiler_ && !released_graph_ && !parts_; }
  // True when the model runs in parts, cut at a node whose output sizes depend on input
  // values (NonZero, Compress, Unique, NonMaxSuppression; model_compiler.h's ModelCut): a
  // head engine, the node run on its values (value_sized_ops.h), a tail engine (itself cut
  // again where the tail has such a node). No single plan or session then holds the model:
  // compile_plan and the session accessors fail, saying so.
  bool runs_in_parts() const { return parts_ != nullptr; }
  // A model in parts: the node it is cut at ("NonZero 'nz'"), and its engines made so far,
  // named ("head", the node's: "then branch", "body", ..., "tail"), for inspection.
  const std::string& cut_node() const;
  std::vector<std::pair<std::string, const Engine*>> part_engines() const;

  // Runs with named inputs; returns the outputs in model order. Throws ferrite::Error for
  // a missing, unknown, duplicated or mistyped input (naming it) and for run failures.
  std::vector<Tensor> run(const std::vector<std::pair<std::string, const Tensor*>>& feeds);
  // The same with values (engine_value.h): sequences and optionals too (inputs declared as
  // such take them; outputs may be them). run fails for a model whose inputs or outputs are
  // sequences or optionals, naming them.
  std::vector<EngineValue> run_values(
      const std::vector<std::pair<std::string, const EngineValue*>>& feeds);

  // A plan for the feeds' shapes, compiled now and not kept (what `ferrite compile` writes),
  // after the same checks of the feeds as run. A plan that would depend on input values
  // cannot be written: NeedsInputValueError.
  Plan compile_plan(const std::vector<std::pair<std::string, const Tensor*>>& feeds);

  // The session the last successful run used (null before the first).
  Session* last_session() const { return last_session_; }

  // The session compiled for the given input shapes (compiling it if new). The engine keeps
  // the kMaxShapeSessions most recently used ones: compiling a new shape set past that
  // destroys the least recently used session (and invalidates references to it), so that a
  // model fed ever-changing shapes (batch sizes, sequence lengths) holds a bounded number
  // of copies of its weights.
  static constexpr size_t kMaxShapeSessions = 8;
  Session& session_for(const std::vector<std::vector<int64_t>>& shapes);
  // How many compiled sessions the engine holds (per shape set, and per input values).
  size_t cached_sessions() const { return sessions_.size() + value_sessions_.size(); }
  // How many plans the compiler has made for this engine (its whole pipeline, from the
  // prepared graph to a plan), and the milliseconds they took (not the sessions' load).
  int64_t compiles() const;
  double compile_ms() const;
  // ModelCompiler::symbolic_status (empty for a plan file or a model run in parts).
  std::string symbolic_status() const;
  // The packed weights its sessions share (packed_store.h): null until the model can have
  // more than one session (symbolic input dims, or plans per input values).
  const PackedStore* packed_store() const { return options_.session.packed_store.get(); }

  // The session run(feeds) would use, after the same checks of the feeds (compiling it if
  // new; specialized on input values where the model needs them). Nothing runs.
  Session& session_for_feeds(const std::vector<std::pair<std::string, const Tensor*>>& feeds);

 private:
  Engine();  // engine_parts.cc, where Parts is complete
  void init(std::unique_ptr<ModelCompiler> compiler, EngineOptions options);
  void init_plan(Plan plan, EngineOptions options);
  // The fed tensors in input order, checked against the declared inputs.
  std::vector<const Tensor*> checked_feeds(
      const std::vector<std::pair<std::string, const Tensor*>>& feeds) const;
  std::vector<const EngineValue*> checked_values(
      const std::vector<std::pair<std::string, const EngineValue*>>& feeds) const;
  // The feeds in input order: each input once, none unknown, none missing.
  template <class Fed>
  std::vector<const Fed*> by_input(
      const std::vector<std::pair<std::string, const Fed*>>& feeds) const;
  // The session for these inputs, or null when the compile cut the model (run it in parts).
  Session* session_or_cut(const std::vector<const Tensor*>& ordered);
  Session& session_for_checked(const std::vector<const Tensor*>& ordered);
  // compiler_->compile, counted and timed (compiles_, compile_ms_).
  Plan compile(const std::vector<IoInfo>& types, const std::vector<const Tensor*>& values);

  // A model cut at a value-sized node (engine_parts.cc).
  struct Parts;
  void init_parts(std::unique_ptr<ModelCut> cut);
  std::vector<EngineValue> run_parts(const std::vector<const EngineValue*>& ordered);
  std::unique_ptr<Parts> parts_;
  std::string parts_message() const;  // why a cut model has no one plan
  // Cuts the model where the compile asked to; false when it cannot be cut there.
  bool cut_for(const NeedsCutError& e);
  // An engine for a part of a cut model: inputs computed by an earlier part have no declared
  // shape, and may have no declared element type (the fed tensors give them).
  bool part_ = false;
  // A part's inputs of undefined element type take the type first fed.
  void adopt_dtypes(const std::vector<std::pair<std::string, const EngineValue*>>& feeds);

  // Whether every declared input dim is static (then the first plan compiled without input
  // values is the only one there will be, and the compiler is released once it exists).
  bool static_inputs() const;
  // Why no new plan can be compiled (compiler_ is null).
  std::string no_compiler_message() const;

  Session* last_session_ = nullptr;
  std::unique_ptr<ModelCompiler> compiler_;  // null for a compiled plan or once released
  bool released_graph_ = false;
  std::string session_error_;  // why the session failed after the graph was released
  EngineOptions options_;
  std::vector<IoInfo> inputs_, outputs_;
  std::vector<DeclaredIo> declared_;  // the inputs, symbols included
  std::vector<std::vector<std::string>> output_dim_names_;
  std::vector<Container> output_containers_;
  std::unordered_map<std::string, size_t> input_index_;  // the first input of each name
  struct CachedSession {
    std::unique_ptr<Session> session;
    uint64_t last_used = 0;  // use_clock_ at its last lookup
  };
  std::map<std::vector<std::vector<int64_t>>, CachedSession> sessions_;
  uint64_t use_clock_ = 0;
  int64_t compiles_ = 0;
  double compile_ms_ = 0;

  // Plans that need input values (compile_graph's NeedsInputValueError, e.g. a Reshape
  // whose shape is a model input): the shape sets known to need them, and their sessions
  // keyed by shapes plus the bytes of the small inputs they are specialized on.
  Session& session_for_values(const std::vector<const Tensor*>& inputs);
  std::set<std::vector<std::vector<int64_t>>> needs_values_;
  std::map<std::string, std::unique_ptr<Session>> value_sessions_;
};

}  // namespace ferrite
