// The runtime Session: loads a Plan once, then runs it many times. It prepares every
// Kernel for the chosen backend at load time, allocates the pool and the constants once,
// and on each run checks the inputs (count, dtype, shape), executes the steps in order and
// returns the outputs. All failures are ferrite::Error with a message naming the input,
// kernel or extern; memory past SessionOptions::memory_limit is refused before it is
// allocated.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/plan/plan.h"
#include "runtime/packed_store.h"
#include "runtime/tensor.h"

namespace ferrite {

struct SessionOptions {
  std::string backend = "portable";  // "reference" | "portable" | "jit" (native x86 builds)
  int threads = 1;
  std::string isa;         // the JIT's instruction set (BackendOptions::isa)
  std::string dump_dir;    // generated code is written here (BackendOptions::dump_dir)
  bool fast_math = false;  // bfloat16 products in float32 MatMul/Conv (BackendOptions::fast_math)
  bool profile = false;    // time every step of every run (Session::profile)
  // The most bytes the session may hold: its pool of intermediates, constants, extern
  // scratch and one run's outputs, checked at load before anything is allocated (a plan is
  // untrusted input). 0: the default (resource_limits.h: FERRITE_MEMORY_LIMIT, else 3/4 of
  // the memory the process may use). Past it the session fails with a LimitError.
  int64_t memory_limit = 0;
  // Called once during load, after the pool is allocated and the kernels are prepared,
  // before the externs copy or pack weights (the engine releases its graph here: a load
  // that fails before this point leaves the graph, so the engine can try again, and the
  // peak of a load does not hold the graph's weights beside the packed ones).
  std::function<void()> before_packing;
  // Shared with the other sessions of the same model (the engine's shape sessions): weights
  // packed by one are used in place by the others (packed_store.h). Null: none shared.
  std::shared_ptr<PackedStore> packed_store;
};

// The time one plan step took over the runs profiled so far.
struct StepTime {
  std::string label;  // "kernel NAME" or "extern ORIGIN [IMPLEMENTATION]" (OP without an origin)
  int64_t runs = 0;   // times it ran (guarded steps may be skipped)
  double total_ms = 0;
};

struct IoInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
};

class Session {
 public:
  // Validates the plan (validate_plan) and prepares it; throws ferrite::Error.
  Session(Plan plan, SessionOptions options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::vector<IoInfo>& inputs() const;
  const std::vector<IoInfo>& outputs() const;
  // The plan it runs, without its constants' bytes (moved into the session at load).
  const Plan& plan() const;
  // Bytes of plan constants the session holds: all of them, less those that only externs
  // read and that each of them copied at prepare time (PreparedExtern::constants_copied:
  // weights oneDNN reordered into its own layout are then held once, prepacked).
  size_t constant_bytes() const;
  // The plan's packed constants (Plan::packed) its externs used instead of packing again;
  // the others were packed for another machine or backend and ignored.
  size_t packed_constants_used() const;
  // The constant inputs the externs packed at load, for a plan to carry (Plan::packed): a
  // plan with them loads on this backend and machine without packing.
  std::vector<PackedConstant> packed_constants() const;

  // `inputs` in the plan's input order. Throws ferrite::Error on a count, dtype or shape
  // mismatch (naming the input) and on a kernel failure (e.g. an index out of range).
  std::vector<Tensor> run(const std::vector<const Tensor*>& inputs);

  // With SessionOptions::profile: one entry per plan step, in plan order, over every run
  // since the session was created or the profile reset; empty otherwise.
  std::vector<StepTime> profile() const;
  void reset_profile();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The backends this build has ("reference", "portable").
std::vector<std::string> available_backends();

}  // namespace ferrite
