// Scheduling for now: one Kernel per realized buffer, in lowering order, and one extern
// call per ExternNode (the fusion scheduler of a later stage replaces this grouping, not
// its output). Work that no graph output needs is dropped. Then every temporary buffer
// gets its pool offset from its live range (compiler/memory).
#pragma once

#include "compiler/lower/graph_lowering.h"
#include "compiler/plan/plan.h"

namespace ferrite {

Plan emit_plan(LoweredProgram& prog);

}  // namespace ferrite
