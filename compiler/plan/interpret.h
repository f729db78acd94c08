// The reference meaning of a Kernel: a scalar interpreter, one instruction at a time, with
// every memory access bounds-checked. It is the oracle the other backends are tested
// against, and the compiler uses it to fold constant subgraphs at compile time (so folding
// and running can never disagree).
#pragma once

#include "compiler/plan/kernel.h"

namespace ferrite {

// args[i]: base of kernel arg i (dense, args[i].elements elements of args[i].dtype).
// Throws ferrite::Error on a failed CheckIndex or an out-of-bounds access.
void interpret_kernel(const Kernel& k, void* const* args);

}  // namespace ferrite
