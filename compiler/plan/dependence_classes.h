// What each SSA value of a Kernel depends on: the ISA-neutral half of vectorizing a kernel,
// shared by the backends that vectorize kernels (the portable block interpreter's levels,
// runtime/kernels/portable/block_program.h; the JIT's loop positions, jit/kernel_analysis.h).
// A backend sorts what a value may depend on into classes, the bits of a mask: each loop
// variable's (the lane variable, the other outer variables, the reduction's), a Reduce's
// result (per outer point, known once its loop is done), memory (a Load, known only at run
// time), a check that may fail. It reads back, per value, the union of the classes of all it
// depends on, and maps that mask to its own notion: Const / Row / Lane, or Entry ... Vec.
// Where the lanes go is decided before (lane_choice.h); what a backend cannot emit, after.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/plan/index_expr.h"
#include "compiler/plan/kernel.h"

namespace ferrite {

using ClassMask = uint8_t;

struct DependenceClasses {
  std::vector<ClassMask> var;   // per loop variable
  ClassMask reduce_result = 0;  // a Reduce's result: this and its outer variables' classes
  ClassMask load = 0;           // what every Load adds
  ClassMask check = 0;          // what every CheckIndex adds
  std::vector<ClassMask> seed;  // per instruction, added to it (empty: nothing)
};

// Per instruction, the classes of all its value depends on: its own (a LoopVar's variable,
// `load` for a Load, `check` for a CheckIndex, the variables of a Load's or Store's index,
// its seed) and those of its operands and index Values. A Reduce's result depends on the
// outer variables and reduce_result only: the reduction's variables are summed away.
// Operands must come first (a validated kernel).
std::vector<ClassMask> dependence_classes(const Kernel& k, const DependenceClasses& c);

// The classes of an index expression: its Vars' and its Values' (read from `masks`).
ClassMask index_classes(const IndexNode& e, const DependenceClasses& c,
                        const std::vector<ClassMask>& masks);

}  // namespace ferrite
