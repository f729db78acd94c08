// compiler::compile: graph passes → lowering → kernels/externs → memory plan.
#include "compiler/compile.h"

#include "compiler/dump.h"
#include "compiler/lower/graph_lowering.h"
#include "compiler/lower/lowering.h"
#include "compiler/memory/memory_dump.h"
#include "compiler/passes/passes.h"
#include "compiler/plan/error.h"
#include "compiler/plan/resource_limits.h"
#include "compiler/plan/stage_times.h"
#include "compiler/schedule/emit_plan.h"
#include "compiler/schedule/scheduler.h"

namespace ferrite {

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
  LoweredProgram prog;
  {
    StageTimer t("lower");
    GraphLowering lowering(g, input_types, input_values);
    lowering.max_unrolled_nodes = max_unrolled_nodes_or_default(options.max_unrolled_nodes);
    prog = lowering.run();
  }
  const bool dump = !options.dump_dir.empty();  // listings only when they are written
  if (dump) dump_text(options.dump_dir, "10_loopir.txt", lowered_program_to_string(prog));
  SchedulerOptions sched;
  sched.fuse = options.fuse;
  Scheduler scheduler = [&] {
    StageTimer t("schedule");
    return Scheduler(prog, sched);
  }();
  {
    StageTimer t("fuse");
    scheduler.fuse();
  }
  if (dump) dump_text(options.dump_dir, "15_fusion.txt", scheduler.report());
  Plan plan;
  {
    StageTimer t("emit_plan");
    plan = emit_plan(prog, scheduler.order());
  }
  {
    StageTimer t("validate_plan");
    validate_plan(plan);
  }
  // Before any session allocates it: a model whose shapes declare an intermediate of
  // hundreds of GB fails here, naming the sizes.
  check_plan_memory(plan, memory_limit_or_default(options.memory_limit));
  if (dump) {
    std::string kernels;
    for (const Kernel& k : plan.kernels) kernels += kernel_to_string(k) + "\n";
    dump_text(options.dump_dir, "20_kernels.txt", kernels);
    dump_text(options.dump_dir, "30_plan.txt", plan_to_string(plan));
    const TempMemory memory = plan_temp_memory(plan);  // as emit_plan's assign_pool_offsets
    dump_text(options.dump_dir, "40_memory.txt", memory_to_text(plan, memory));
    dump_text(options.dump_dir, "41_memory.svg", memory_to_svg(plan, memory));
  }
  return plan;
}

}  // namespace ferrite
