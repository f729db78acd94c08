// The reference meaning of a Kernel: a scalar interpreter, one instruction at a time, with
// every memory access bounds-checked. It is the oracle the other backends are tested
// against, and the compiler uses it to fold constant subgraphs at compile time (so folding
// and running can never disagree).
#pragma once

#include "compiler/plan/kernel.h"
#include "compiler/plan/scalar_ops.h"

namespace ferrite {

// args[i]: base of kernel arg i (dense, args[i].elements elements of args[i].dtype).
// Throws ferrite::Error on a failed CheckIndex or an out-of-bounds access.
void interpret_kernel(const Kernel& k, void* const* args);

// Roughly the steps interpret_kernel takes: its iteration points (every range, reductions
// included) times one per instruction plus the nodes of each index it evaluates (a tree
// walk, each counted at most 4096). What constant folding and the fuzz budgets weigh.
double interpret_work(const Kernel& k);

// The value of one non-memory instruction (Const, Cast, CheckIndex, Where, unary and
// binary ops) from the values of earlier instructions (`vals`, by SSA id). Every scalar
// evaluator shares it: the interpreter, and the per-row values of the vector backends.
Scalar eval_instr(const Kernel& k, const Instr& in, const Scalar* vals);
// The error of a failed CheckIndex: the kernel's message, the index and the range.
[[noreturn]] void fail_check_index(const Kernel& k, const Instr& in, int64_t v);

}  // namespace ferrite
