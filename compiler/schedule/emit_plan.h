// Plan emission: the scheduled nodes, in order, become the Plan's steps (a kernel call per
// kernel node, an extern call per extern node); every buffer they touch becomes a plan
// buffer, and every temporary one gets its pool offset from its live range
// (compiler/memory).
#pragma once

#include <vector>

#include "compiler/lower/graph_lowering.h"
#include "compiler/plan/plan.h"
#include "compiler/schedule/scheduler.h"

namespace ferrite {

Plan emit_plan(const LoweredProgram& prog, const std::vector<const SchedulerNode*>& order);

}  // namespace ferrite
