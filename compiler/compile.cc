// compiler::compile: graph passes (passes/passes.cc), then the compile stages below, top to
// bottom as passes.cc runs the passes: each stage runs timed, then (with a dump dir) writes
// its listing. Add a stage to the table, in its own file.
#include "compiler/compile.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/dump.h"
#include "compiler/lower/graph_lowering.h"
#include "compiler/lower/lowering.h"
#include "compiler/memory/live_ranges.h"
#include "compiler/memory/memory_dump.h"
#include "compiler/passes/passes.h"
#include "compiler/plan/error.h"
#include "compiler/plan/resource_limits.h"
#include "compiler/plan/stage_times.h"
#include "compiler/schedule/emit_plan.h"
#include "compiler/schedule/loop_normalize.h"
#include "compiler/schedule/scheduler.h"

namespace ferrite {
namespace {

// What the stages hand on: each reads what the ones before it made.
struct CompileState {
  CompileState(const Graph& g, const std::vector<TensorType>& types,
               const std::vector<std::shared_ptr<const TensorData>>& values,
               const CompileOptions& o)
      : graph(g), input_types(types), input_values(values), options(o) {}
  const Graph& graph;
  const std::vector<TensorType>& input_types;
  const std::vector<std::shared_ptr<const TensorData>>& input_values;
  const CompileOptions& options;
  const ShapeEnv* shapes = nullptr;     // a symbolic compile's symbols
  std::vector<FieldFormula> formulas;   // emit_plan's, compiling symbolically
  std::vector<KernelTemplate> kernels;  // emit_plan's kernel templates, compiling symbolically
  LoweredProgram prog;                  // lower
  std::optional<Scheduler> scheduler;   // fuse (it points into prog)
  Plan plan;                            // emit_plan; normalize_loops and plan_memory edit it
  TempMemory memory;                    // plan_memory
};

std::string kernels_to_string(const Plan& plan) {
  std::string out;
  for (const Kernel& k : plan.kernels) out += kernel_to_string(k) + "\n";
  return out;
}

void lower(CompileState& s) {
  GraphLowering lowering(s.graph, s.input_types, s.input_values);
  lowering.set_shape_env(s.shapes);
  lowering.max_unrolled_nodes = max_unrolled_nodes_or_default(s.options.max_unrolled_nodes);
  lowering.memory_limit = memory_limit_or_default(s.options.memory_limit);
  s.prog = lowering.run();
}

void fuse(CompileState& s) {
  SchedulerOptions sched;
  sched.fuse = s.options.fuse;
  s.scheduler.emplace(s.prog, sched);
  s.scheduler->fuse();
}

void emit(CompileState& s) {
  s.plan = emit_plan(s.prog, s.scheduler->order(), s.shapes ? &s.formulas : nullptr,
                     s.shapes ? &s.kernels : nullptr);
}

void normalize(CompileState& s) {
  for (Kernel& k : s.plan.kernels) k = normalize_loops(k);
}

void plan_memory(CompileState& s) {
  s.memory = assign_pool_offsets(&s.plan);
}

// The listings a stage writes after it runs: {file extension, text}.
using Listings = std::vector<std::pair<const char*, std::string>>;

struct Stage {
  const char* name;  // the StageTimer row; the dump files are <number>_<name>.<ext>
  void (*run)(CompileState&);
  Listings (*dump)(const CompileState&);
};

// Numbered after the graph passes (00_imported, 01_... up to 29): 30, 40, ... leave room
// for stages between these; the JIT's per-kernel listings come last (80_jit_*).
const Stage kStages[] = {
    {"lower", lower,
     [](const CompileState& s) -> Listings {
       return {{"txt", lowered_program_to_string(s.prog)}};
     }},
    {"fuse", fuse,
     [](const CompileState& s) -> Listings {
       return {{"txt", s.scheduler->report()}};
     }},
    {"emit_plan", emit,
     [](const CompileState& s) -> Listings {
       if (!s.shapes) return {{"txt", plan_to_string(s.plan)}};
       std::string guards;
       for (const SymGuard& g : s.prog.guards)
         guards +=
             str_cat(g.lo, " <= ", index_to_string(*g.formula), " <= ", g.hi, " (", g.why, ")\n");
       return {{"txt", plan_to_string(s.plan) + "formulas:\n" + formulas_to_string(s.formulas) +
                           "kernel templates:\n" + kernel_templates_to_string(s.kernels) +
                           "guards:\n" + guards}};
     }},
    {"normalize_loops", normalize,
     [](const CompileState& s) -> Listings {
       return {{"txt", kernels_to_string(s.plan)}};
     }},
    {"plan_memory", plan_memory,
     [](const CompileState& s) -> Listings {
       return {{"txt", memory_to_text(s.plan, s.memory)}, {"svg", memory_to_svg(s.plan, s.memory)}};
     }},
};

void run_stages(CompileState& s);

}  // namespace

void prepare_graph(Graph& g, const CompileOptions& options) {
  run_graph_passes(g, options.dump_dir, options.fuse, options.channels_last);
  StageTimer timer("check_ops_supported");
  check_ops_supported(g);
}

Plan compile_graph(const Graph& g, const std::vector<TensorType>& input_types,
                   const CompileOptions& options,
                   const std::vector<std::shared_ptr<const TensorData>>& input_values) {
  for (size_t i = 0; i < input_types.size(); ++i) {
    if (!input_types[i].is_static()) {
      fail("compile: input '", i < g.inputs.size() ? g.inputs[i]->name : "?",
           "' has no concrete shape");
    }
  }
  StageTimer timer("compile");
  CompileState s{g, input_types, input_values, options};
  run_stages(s);
  return std::move(s.plan);
}

SymbolicPlan compile_symbolic(const Graph& g, const std::vector<TensorType>& hint_types,
                              const CompileOptions& options) {
  std::vector<TensorType> declared;
  for (const Value* v : g.inputs) declared.push_back(v->type);
  SymbolicPlan out;
  try {
    out.shapes = ShapeEnv::for_inputs(declared, hint_types);
  } catch (const Error& e) {
    not_symbolic(e.what());
  }
  if (out.shapes.symbols.empty()) not_symbolic("the model has no symbolic input dims");
  StageTimer timer("compile");
  const std::vector<std::shared_ptr<const TensorData>> no_values;
  CompileState s{g, hint_types, no_values, options};
  s.shapes = &out.shapes;
  run_stages(s);
  out.plan = std::move(s.plan);
  out.formulas = std::move(s.formulas);
  out.kernels = std::move(s.kernels);
  out.guards = s.prog.guards;
  return out;
}

Plan instantiate_plan(const SymbolicPlan& p, const std::vector<int64_t>& values,
                      const CompileOptions& options) {
  StageTimer timer("instantiate_plan");
  if (values.size() != p.shapes.symbols.size())
    fail("instantiate: ", values.size(), " symbol values for ", p.shapes.symbols.size(),
         " symbols");
  if (!guards_hold(p.guards, values)) fail("instantiate: the sizes break the plan's guards");
  Plan plan = substitute_formulas(p.plan, p.formulas, values);
  for (const KernelTemplate& t : p.kernels) {
    if (t.kernel < 0 || t.kernel >= static_cast<int32_t>(plan.kernels.size()))
      fail("instantiate: a template of kernel ", t.kernel, " of ", plan.kernels.size());
    plan.kernels[static_cast<size_t>(t.kernel)] = normalize_loops(instantiate_kernel(t, values));
  }
  assign_pool_offsets(&plan);
  validate_plan(plan);
  check_plan_memory(plan, memory_limit_or_default(options.memory_limit));
  return plan;
}

namespace {

void run_stages(CompileState& s) {
  const CompileOptions& options = s.options;
  const bool dump = !options.dump_dir.empty();  // listings only when they are written
  int number = 30;
  for (const Stage& stage : kStages) {
    {
      StageTimer t(stage.name);
      stage.run(s);
    }
    if (dump) {
      for (const auto& [ext, text] : stage.dump(s))
        dump_text(options.dump_dir, str_cat(number, "_", stage.name, ".", ext), text);
    }
    number += 10;
  }
  {
    StageTimer t("validate_plan");
    validate_plan(s.plan);
  }
  // Before any session allocates it: a model whose shapes declare an intermediate of
  // hundreds of GB fails here, naming the sizes.
  check_plan_memory(s.plan, memory_limit_or_default(options.memory_limit));
  if (dump) dump_text(options.dump_dir, "79_plan.txt", plan_to_string(s.plan));
}

}  // namespace

}  // namespace ferrite
