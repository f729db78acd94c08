// Plan emission: the scheduled nodes, in order, become the Plan's steps (a kernel call per
// kernel node, its kernel as fused; an extern call per extern node); every buffer they touch
// becomes a plan buffer. The later compile stages (compile.cc) normalize the kernels' loops
// and give the Temp buffers their pool offsets.
#pragma once

#include <vector>

#include "compiler/lower/graph_lowering.h"
#include "compiler/plan/plan.h"
#include "compiler/plan/plan_formulas.h"
#include "compiler/schedule/kernel_template.h"
#include "compiler/schedule/scheduler.h"

namespace ferrite {

// With `formulas` and `templates` (a symbolic compile: prog.symbols), also the formula of
// each field that depends on a symbol (plan/plan_formulas.h) and each kernel's template
// (kernel_template.h; the plan holds its instance at the symbols' hints); a buffer, step or
// operand that is not symbolic throws NotSymbolicError.
Plan emit_plan(const LoweredProgram& prog, const std::vector<const SchedulerNode*>& order,
               std::vector<FieldFormula>* formulas = nullptr,
               std::vector<KernelTemplate>* templates = nullptr);

}  // namespace ferrite
