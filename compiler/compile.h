// compiler::compile — the whole compiler in one call (Inductor's compile_fx):
// graph passes → lowering to loop IR → scheduling into Kernels and Externs → memory plan.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "compiler/loopir/shape_env.h"
#include "compiler/plan/plan.h"
#include "compiler/plan/plan_formulas.h"
#include "compiler/schedule/kernel_template.h"

namespace ferrite {

struct CompileOptions {
  std::string dump_dir;  // FERRITE_DUMP: write the graph after each pass, loop IR, kernels, plan
  // Fusion: the graph passes that fold into and fuse epilogues into externs, and the
  // scheduler's rounds (off: no extern post-ops, one kernel per realized buffer).
  bool fuse = true;
  // The backend's convolutions prefer channels-last activations ([N, H, W, C], read through
  // an NCHW view): what oneDNN's fastest convolutions (brgconv) want. prepare_graph's
  // choose_conv_layout pass then picks the convolutions that store their outputs so. The
  // Engine turns it on for the JIT backend; a plan is valid for every backend either way.
  bool channels_last = false;
  // Resource limits (compiler/plan/resource_limits.h; 0: the default): the most bytes the
  // compiled plan's session may hold (its pool of intermediates, constants and outputs),
  // and the most nodes unrolling Loop, Scan and recurrent ops may lower. Past either the
  // compile fails with a LimitError naming what needs more.
  int64_t memory_limit = 0;
  int64_t max_unrolled_nodes = 0;
};

// Runs the shape-independent graph passes in place (passes/passes.cc): sort, clean-up, ...
// Then checks that every op has a lowering: UnsupportedError naming the first node that
// has none, so that a model load reports it before any input shape is known.
void prepare_graph(Graph& g, const CompileOptions& options);

// Compiles `g` for concrete input types (one per g.inputs, all dims static). Throws
// ferrite::Error naming the node on unsupported ops or invalid shapes.
//
// `input_values` (optional, one per input, null where unknown) specializes the plan on the
// values of some inputs: they become compile-time constants wherever an op needs one (a
// Reshape's shape, Slice's starts, ...). The caller must then run the plan only with those
// same values. A plan that needs such a value and lacks it fails with
// NeedsInputValueError.
Plan compile_graph(const Graph& g, const std::vector<TensorType>& input_types,
                   const CompileOptions& options,
                   const std::vector<std::shared_ptr<const TensorData>>& input_values = {});

// A plan compiled once for every size of the model's symbolic input dims (docs/shapes.md):
// the plan at the symbols' hints, the formula of each field that depends on a symbol, and
// the symbols (how each is read from the inputs' shapes).
struct SymbolicPlan {
  Plan plan;
  std::vector<FieldFormula> formulas;
  std::vector<KernelTemplate> kernels;  // each symbolic kernel's template (plan.kernels: hints)
  ShapeEnv shapes;
  // What the compile assumed about the symbols (a slice's bound within its dim, ...): the
  // plan is an instance only for values where they hold (guards_hold); others are
  // compiled per shape.
  std::vector<SymGuard> guards;
};

// Compiles `g` once for its symbolic input dims, hinted by `hint_types` (concrete shapes of
// the declared ranks; symbolic dims of at least ShapeEnv::kMinHint). Throws
// NotSymbolicError (naming the node) where the compile is not symbolic yet: the model is then
// compiled per shape with compile_graph, as before. Other errors are the compile's.
SymbolicPlan compile_symbolic(const Graph& g, const std::vector<TensorType>& hint_types,
                              const CompileOptions& options);

// The plan for symbol values `values` (ShapeEnv::values_for, where the guards hold; else an
// Error): the formulas written, the pool placed for these sizes, the plan validated and its
// memory checked (compile_graph's checks).
Plan instantiate_plan(const SymbolicPlan& p, const std::vector<int64_t>& values,
                      const CompileOptions& options);

}  // namespace ferrite
