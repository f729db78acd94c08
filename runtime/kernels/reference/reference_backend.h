// The reference backend: runs each Kernel with the scalar interpreter of the Kernel
// contract (compiler/plan/interpret.h, the same code the compiler folds constants with)
// and each extern with its reference implementation. Slow and obviously correct: it is
// the oracle the portable and JIT backends are tested against.
#pragma once

#include <memory>
#include <string>

#include "compiler/plan/externs/extern_op.h"
#include "runtime/backend.h"

namespace ferrite {

std::unique_ptr<KernelBackend> make_reference_backend();

// The reference implementation of extern `op`: its definition.
ExternFn reference_extern(ExternOp op);

}  // namespace ferrite
